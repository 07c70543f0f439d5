"""Raw downloads of stored binary content, shared by the API and the admin."""

from django.http import HttpResponse

from sessions_app.models import FeedbackAttachment


def attachment_download_response(attachment: FeedbackAttachment) -> HttpResponse:
    response = HttpResponse(bytes(attachment.content), content_type=attachment.content_type)
    safe_name = attachment.file_name.replace('"', "").replace("\\", "").replace("\n", " ")
    response["Content-Disposition"] = f'attachment; filename="{safe_name}"'
    return response

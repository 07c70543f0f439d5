"""Raw downloads of stored binary content, shared by the API and the admin."""

from django.http import HttpResponse
from django.utils.http import content_disposition_header

from sessions_app.models.feedback import FALLBACK_MEDIA_TYPE, MEDIA_TYPE, FeedbackAttachment


def attachment_download_response(attachment: FeedbackAttachment) -> HttpResponse:
    """The bytes as a download. The headers are safe whatever is stored (rows written through the ORM
    skip the model's validators): the file name is encoded per RFC 6266 and a malformed media type
    falls back to application/octet-stream."""
    content_type = attachment.content_type if MEDIA_TYPE.match(attachment.content_type) else FALLBACK_MEDIA_TYPE
    response = HttpResponse(bytes(attachment.content), content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, attachment.file_name or "attachment")
    return response

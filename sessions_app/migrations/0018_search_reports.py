"""Task reports are searched (issue #31): an attempt's implementation and review reports and its error
join the full-text index (ralphsite/core/search/schema.py): SQLite triggers (an insert queues the
attempt), PostgreSQL GIN expression indexes. A later migration that makes SQLite rebuild the attempts
table must install it again. Backwards: the index of reports goes."""

from django.db import migrations

from ralphsite.core.search.schema import search_index_operation
from ralphsite.core.search.sources import SearchTable

# The searched table as this migration indexes it (the app's search_sources may change later).
_SEARCHED = (SearchTable("report", "sessions_app_taskattempt",
                         ("implementation_report", "review_report", "error_type", "error_message")),)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0017_keys_never_shaped_like_ids")]

    operations = [search_index_operation(_SEARCHED)]

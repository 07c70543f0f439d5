"""The orchestration's searchable rows (ralphsite/core/search): task reports, one per attempt (Ralph V2's
TaskReports: implementation and review reports; DevTeam's attempt error type and message). Registered by
the app's ready(); migration 0017 installs it."""

from ralphsite.core.search.sources import SearchSource

REPORTS = SearchSource(
    "report", "sessions_app_taskattempt", ("implementation_report", "review_report", "error_type", "error_message"),
    model="sessions_app.TaskAttempt", alias="a",
    parents=" JOIN sessions_app_task tk ON tk.id = a.task_id",  # an attempt's scope is its task's session
    session="tk.session_id", subtype="a.status")
SEARCH_SOURCES = (REPORTS,)

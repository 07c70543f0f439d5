"""The sessions app's admin, one module per area (importing them registers the models)."""

from sessions_app.admin import devteam, orchestration, session

__all__ = ["devteam", "orchestration", "session"]

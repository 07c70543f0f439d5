"""`POST /api/v1/claude-code/loops/`: a Ralph loop started in a project's Claude Code session (`ralph loop start`)."""

from django.db import transaction

from ralphsite.agents.claude_code.sessions import claude_session_get, pending_loop_session_create, project_of
from ralphsite.core.access import Scope
from sessions_app.models import LoopRun
from sessions_app.services.loops import loop_run_start


def claude_code_loop_start(*, scope: Scope, project_path: str, prompt: str, max_iterations: int | None,
                           completion_promise: str, claude_session_id: str | None,
                           pause_timeout_seconds: int | None) -> LoopRun:
    """In the Claude Code session named (made now if Claude Code has not reported it yet), or, with none named, in a
    session that waits for the project's next Claude Code session and joins it at its first hook."""
    project = project_of(scope=scope, path=project_path)
    with transaction.atomic():
        if claude_session_id:
            session, _ = claude_session_get(scope=scope, key=claude_session_id, path=project_path, reopen=True)
        else:
            session = pending_loop_session_create(project_path=project)
        return loop_run_start(session=session, prompt=prompt, max_iterations=max_iterations,
                              completion_promise=completion_promise, pause_timeout_seconds=pause_timeout_seconds)

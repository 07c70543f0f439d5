"""Which Ralph Site session a Claude Code session is: its `session_id` is the session's key, its project the
token's (or, for a global token, the hook's `cwd`). A loop started before its Claude Code session was known waits
in a session of no key (`PENDING_LOOP_COMMAND`) and joins the project's Claude Code session at its next hook."""

from pathlib import PurePosixPath

from django.db import IntegrityError, transaction

from ralphsite.core.access import Scope
from ralphsite.core.addressing import as_ulid
from ralphsite.core.errors import InvalidInput, PermissionDenied
from ralphsite.core.models import TokenScope
from sessions_app.models import FINISHED_SESSION_STATUSES, LoopRun, LoopRunStatus, Session, SessionStatus
from sessions_app.services.loops import LOOP_AGENT, loop_run_move
from sessions_app.services.sessions import (
    session_create,
    session_delete,
    session_finish,
    session_resume,
    session_update,
)

CLAUDE_CODE_COMMAND = "claude-code"
PENDING_LOOP_COMMAND = "claude-code loop (waiting for its Claude Code session)"
SESSION_KEY_MAX = Session._meta.get_field("key").max_length


def project_of(*, scope: Scope, path: str) -> str:
    """The project a hook's `cwd` (or a loop's project path) is in: a project token's own project, when the path
    is it or lies below it (403 `project_out_of_scope` otherwise); a session token's session's project; a global
    token's, the path itself."""
    if not path.startswith("/"):
        raise InvalidInput("The project path is absolute.", code="invalid_project_path",
                           details={"cwd": [f"Not an absolute path: {path[:200]!r}."]})
    if scope.kind == TokenScope.GLOBAL:
        return path.rstrip("/") or "/"
    project = scope.project_path if scope.kind == TokenScope.PROJECT else (
        Session.objects.filter(pk=scope.session_id).values_list("project_path", flat=True).first() or "")
    if project and path_inside(path, project):
        return project
    raise PermissionDenied(f"{path[:200]!r} is not in this token's project {project!r}.", code="project_out_of_scope",
                           details={"cwd": path[:1000], "project_path": project})


def path_inside(path: str, directory: str) -> bool:
    return PurePosixPath(path) == PurePosixPath(directory) or PurePosixPath(directory) in PurePosixPath(path).parents


def claude_session_key_check(key: str) -> None:
    if not key or len(key) > SESSION_KEY_MAX or as_ulid(key):
        raise InvalidInput("session_id is Claude Code's session id (a UUID).", code="invalid_session_id",
                           details={"session_id": [f"1 to {SESSION_KEY_MAX} characters, not shaped like a ULID."]})


def claude_session_get(*, scope: Scope, key: str, path: str, reopen: bool, join_pending: bool = True
                       ) -> tuple[Session, bool]:
    """The session keyed by the Claude Code session id, made on first sight in the project of `path` (joining the
    project's pending loop, if one waits); (session, created). A stopped one runs again when `reopen` (Claude Code
    resumed or prompted in it; a completed one stays completed: seed 001's rule). A session key is unique within its
    project only: the session is the one of that key the token sees whose project `path` is in (the innermost), and
    another project's session of the same key is neither found nor told of (no existence oracle). One the token may
    not see in the project itself (a session token's sibling) is a 403 `session_out_of_scope`. `join_pending`: a
    loop waiting in the project joins this session (a hook of live work; not a late record of an old session)."""
    claude_session_key_check(key)
    project_path = project_of(scope=scope, path=path)
    holders = [held for held in scope.filter(Session.objects.filter(key=key))
               if path_inside(path, held.project_path or "/")]
    session = max(holders, key=lambda held: len(held.project_path), default=None)
    created = session is None
    if session is None:
        session, created = _session_made(key=key, project_path=project_path, join_pending=join_pending)
    if not scope.contains(session) or not path_inside(path, session.project_path or "/"):
        raise PermissionDenied(f"Claude Code session {key} belongs to another project.", code="session_out_of_scope",
                               details={"session_id": key})
    if join_pending:
        _pending_loop_join(session=session, project_path=session.project_path)
    if reopen and session.status in FINISHED_SESSION_STATUSES and session.status != SessionStatus.COMPLETED:
        session_resume(session=session, agent=LOOP_AGENT, force=True)
        session.refresh_from_db()
    return session, created


def _session_made(*, key: str, project_path: str, join_pending: bool) -> tuple[Session, bool]:
    pending = _pending_loop_session(project_path) if join_pending else None
    if pending is not None:
        return session_update(session=pending, data={"key": key, "command": CLAUDE_CODE_COMMAND}), True
    try:
        with transaction.atomic():  # a concurrent hook of the same new session: the key's constraint decides
            return session_create(data={"key": key, "project_path": project_path, "command": CLAUDE_CODE_COMMAND,
                                        "current_phase": "claude-code"}), True
    except IntegrityError:  # or one the token may not see holds the key in the project (refused by the caller)
        return Session.objects.get(key=key, project_path=project_path), False


def pending_loop_session_create(*, project_path: str) -> Session:
    return session_create(data={"project_path": project_path, "command": PENDING_LOOP_COMMAND})


def _pending_loop_session(project_path: str) -> Session | None:
    return (Session.objects.filter(key="", project_path=project_path, command=PENDING_LOOP_COMMAND,
                                   loop_runs__status=LoopRunStatus.RUNNING)
            .order_by("-started_at").first())


def _pending_loop_join(*, session: Session, project_path: str) -> None:
    """A loop waiting for its Claude Code session moves into this one (its waiting session goes)."""
    pending = _pending_loop_session(project_path)
    if pending is None or pending.pk == session.pk:
        return
    for loop_run in LoopRun.objects.filter(session=pending, status=LoopRunStatus.RUNNING):
        loop_run_move(loop_run=loop_run, session=session)
    session_finish(session=pending, status="aborted", exit_reason=f"its loop joined Claude Code session {session.key}")
    session_delete(session=Session.objects.get(pk=pending.pk))

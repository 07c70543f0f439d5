"""The project's current session, for every process of the project: `<project>/.ralph/session`.

`ralph session start` writes the new session's id there and `ralph session end` removes it (when it
still names the session that ended), so a hook script, a subshell or a second terminal working in the
same project finds the session without being told. The project is the directory named by
RALPH_PROJECT_DIR, else the nearest directory, from the current one up, that holds `.ralph/` or `.git`
(a subdirectory of a repository belongs to the repository's project), else the current directory.

Which session a command acts on, first found wins: the command's own argument (`--session`, or the
trailing argument of a shell function), RALPH_SESSION, then the project's file. When several sessions
are started in one project, the file names the one started last; nested projects each have their own.
"""

import os
from pathlib import Path

STATE_DIR = ".ralph"
SESSION_FILE = "session"


def project_dir(start: Path | None = None) -> Path:
    explicit = os.environ.get("RALPH_PROJECT_DIR")
    if explicit:
        return Path(explicit).resolve()
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if (directory / STATE_DIR).is_dir() or (directory / ".git").exists():
            return directory
    return here


def session_file(start: Path | None = None) -> Path:
    return project_dir(start) / STATE_DIR / SESSION_FILE


def current_session(start: Path | None = None) -> str:
    """The session the project's file names, or "" when there is none."""
    try:
        return session_file(start).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def current_session_set(session_id: str) -> Path:
    """Name `session_id` as the project's current session (written whole, then renamed: a reader never
    sees half an id)."""
    path = session_file()
    path.parent.mkdir(exist_ok=True)
    partial = path.with_name(f".{SESSION_FILE}.{os.getpid()}")
    partial.write_text(session_id + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def current_session_clear(session_id: str) -> None:
    """Forget the project's current session if it is `session_id` (another one started since stays)."""
    if current_session() == session_id:
        session_file().unlink(missing_ok=True)

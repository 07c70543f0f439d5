"""The real Claude Code CLI against the Messages stub (and, for the loop tests, the live gunicorn server).

Every module here starts real processes (the CLI, a hook per event) and is marked `smoke`: they run in the
SQLite and PostgreSQL legs of CI, not in the version legs.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_code.cli import claude_bin
from tests.claude_code.messages_stub import MessagesStub
from tests.claude_code.project import ClaudeProject, new_project
from tests.live_gunicorn import LiveGunicorn


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    """The pinned CLI; without it a skip (a failure under CI). Requested first, so nothing is started before."""
    return claude_bin()


@pytest.fixture(scope="module")
def messages_stub(claude_cli: Path) -> Iterator[MessagesStub]:
    """One stub for the module; each test loads its own script (`load`), which clears the record."""
    with MessagesStub() as stub:
        yield stub


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """The CLI's HOME and config dir for one test: no settings, sessions or credentials of the user."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def project(tmp_path: Path, claude_cli: Path, messages_stub: MessagesStub,
            gunicorn_server: LiveGunicorn) -> ClaudeProject:
    """A project `ralph claude init` set up against the session's live server (the CLI checked first: without it
    nothing starts)."""
    return new_project(tmp_path, server_url=gunicorn_server.url, admin_token=gunicorn_server.token,
                       stub=messages_stub)

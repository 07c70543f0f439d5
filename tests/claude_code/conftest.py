"""The real Claude Code CLI against the Messages stub (and, for the loop tests, the live gunicorn server).

Every module here starts real processes (the CLI, a hook per event) and is marked `smoke`: they run in the
SQLite and PostgreSQL legs of CI, not in the version legs.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_code.cli import claude_bin
from tests.claude_code.messages_stub import MessagesStub


@pytest.fixture(scope="module")
def messages_stub() -> Iterator[MessagesStub]:
    """One stub for the module; each test loads its own script (`load`), which clears the record."""
    claude_bin()  # skip (or fail under CI) before starting anything when the CLI is not installed
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

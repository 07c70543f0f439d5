"""import_seed shows its progress on a terminal (issue #29): a bar per table on stderr, redrawn in place, then the
summary on stdout. Off a terminal (a log, a pipe) stderr stays empty: the summary alone."""

import os
import pty
import sqlite3
import threading
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.seed_io.helpers import summary_row
from tests.seed_io.test_ralphy import _ralphy_db

pytestmark = pytest.mark.django_db


def _on_a_terminal(*arguments: str) -> tuple[str, str]:
    """import_seed with stderr on a pseudo-terminal: (what the terminal showed, stdout)."""
    controller, terminal = pty.openpty()
    shown = bytearray()

    def drain() -> None:  # the terminal's buffer is small: read while the command writes
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal side closed (EIO)
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out = StringIO()
    with open(terminal, "w", encoding="utf-8", closefd=True) as stderr:
        assert stderr.isatty()
        call_command("import_seed", *arguments, stdout=out, stderr=stderr)
    reader.join(timeout=10)
    os.close(controller)
    return shown.decode(), out.getvalue()


def test_it_draws_a_bar_per_table_on_a_terminal(tmp_path: Path) -> None:
    path = _ralphy_db(tmp_path / "ralphy.db")
    with sqlite3.connect(path) as db:  # an empty table is done too: its bar ends its line
        db.execute("DELETE FROM checkpoints")
    shown, summary = _on_a_terminal("ralphy", str(path))
    assert summary_row(summary, "ledger")[1] != "0"
    bars = [line.rsplit("\r", 1)[-1] for line in shown.replace("\r\n", "\n").split("\n") if line]
    assert [bar.split()[0] for bar in bars] == ["runs", "tasks", "ledger", "issues", "checkpoints"], shown
    assert all("100.0%" in bar and "rows/s" in bar for bar in bars), shown
    assert "[##############################]" in shown


def test_it_draws_nothing_off_a_terminal(tmp_path: Path) -> None:
    out, err = StringIO(), StringIO()
    call_command("import_seed", "ralphy", str(_ralphy_db(tmp_path / "ralphy.db")), stdout=out, stderr=err)
    assert err.getvalue() == ""
    assert summary_row(out.getvalue(), "ledger")[1] != "0"

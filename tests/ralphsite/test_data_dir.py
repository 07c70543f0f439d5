"""Who writes the data dir (issue #25 §3): importing the settings (or the WSGI application) writes
nothing; the data dir (0700), its secret key (0600) and static/ are made by the commands that write
them: migrate (test_deployment.py), bootstrap, collectstatic, the server's start, an SQLite connection."""

import os
import stat
import subprocess
import sys
import threading
import warnings
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.http import HttpResponse
from django.test import RequestFactory

from ralphsite.core.paths import BASE_DIR, private_dir_create
from ralphsite.core.secrets import SECRET_KEY_FILE, secret_key_load_or_create
from ralphsite.middleware import StaticFilesMiddleware
from ralphsite.tokens.credentials import CREDENTIALS_FILE


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _python(code: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter as the server or a command starts: no SECRET_KEY, DATABASE_URL or
    DJANGO_SETTINGS_MODULE of the test run's, RALPH_DATA_DIR at `data_dir`; warnings are errors."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("SECRET_KEY", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG")}
    return subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True,
                          env={**environment, "RALPH_DATA_DIR": str(data_dir), **env}, timeout=120)


def test_importing_the_settings_writes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    # Django's setup too (every app's ready()); a command that then reads the database makes the dir
    # (Django 6's `check` does: its database checks connect).
    done = _python("import ralphsite.settings as s; print(repr(s.SECRET_KEY)); "
                   "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'ralphsite.settings'; django.setup()",
                   missing / "data")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "''"  # no key anywhere: Django refuses whatever would sign
    assert not missing.exists()


def test_a_wsgi_server_starting_makes_the_data_dir_and_its_key(tmp_path: Path) -> None:
    """Any WSGI server (gunicorn without our config too) imports ralphsite.wsgi: the key exists before the
    settings read it, so no request fails for want of one."""
    data = tmp_path / "fresh" / "data"
    done = _python("import ralphsite.wsgi; from django.conf import settings; print(len(settings.SECRET_KEY))", data)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) >= 50
    assert _mode(data) == 0o700 and _mode(data / SECRET_KEY_FILE) == 0o600
    assert "No directory at" not in done.stderr  # whitenoise's warning about a missing STATIC_ROOT


def test_the_settings_read_the_key_a_command_made(tmp_path: Path) -> None:
    key = secret_key_load_or_create(tmp_path / SECRET_KEY_FILE)
    done = _python("import ralphsite.settings as s; print(s.SECRET_KEY)", tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == key, done.stderr
    given = _python("import ralphsite.settings as s; print(s.SECRET_KEY)", tmp_path, SECRET_KEY="from-the-env" * 5)
    assert given.stdout.strip() == "from-the-env" * 5  # SECRET_KEY wins over the file


def test_the_server_start_makes_the_data_dir_and_the_key_before_the_workers_fork(tmp_path: Path) -> None:
    """gunicorn's master has no Django settings; on_starting runs there before any worker exists."""
    code = "from ralphsite.server import gunicorn_conf; gunicorn_conf.on_starting(None)"
    data = tmp_path / "fresh" / "data"
    done = _python(code, data)
    assert done.returncode == 0, done.stderr
    assert _mode(data) == _mode(data.parent) == 0o700
    key = (data / SECRET_KEY_FILE).read_text()
    assert len(key) >= 50 and _mode(data / SECRET_KEY_FILE) == 0o600
    assert _python(code, data).returncode == 0 and (data / SECRET_KEY_FILE).read_text() == key  # made once

    given = tmp_path / "given"
    assert _python(code, given, SECRET_KEY="from-the-env" * 5).returncode == 0
    assert _mode(given) == 0o700 and not (given / SECRET_KEY_FILE).exists()


@pytest.mark.django_db
def test_bootstrap_makes_the_data_dir_and_the_key_when_nothing_wrote_there_yet(settings, tmp_path: Path) -> None:
    """With PostgreSQL, migrate need not have written into the data dir."""
    data = tmp_path / "fresh"
    settings.DATA_DIR, settings.SECRET_KEY = data, ""  # as a command finds a fresh data dir
    call_command("bootstrap", stdout=StringIO())
    assert _mode(data) == 0o700
    assert _mode(data / SECRET_KEY_FILE) == _mode(data / CREDENTIALS_FILE) == 0o600


def test_collectstatic_makes_the_data_dir_for_the_owner_only(settings, tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    settings.STATIC_ROOT = data / "static"
    call_command("collectstatic", "--noinput", "--no-post-process", verbosity=0)
    assert _mode(data) == 0o700
    assert (data / "static" / "admin" / "css" / "base.css").is_file()


def test_whitenoise_serves_what_was_collected_and_is_quiet_before(settings, tmp_path: Path) -> None:
    settings.STATIC_ROOT = tmp_path / "static"
    request = RequestFactory().get("/static/site.css")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # whitenoise's `No directory at: …`
        before = StaticFilesMiddleware(lambda r: HttpResponse(status=404))(request)
    assert before.status_code == 404
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "site.css").write_text("body {}")
    after = StaticFilesMiddleware(lambda r: HttpResponse(status=404))(request)
    assert after.status_code == 200 and b"".join(after.streaming_content) == b"body {}"


def test_processes_creating_the_key_at_once_agree_and_never_read_it_half_written(tmp_path: Path) -> None:
    path = tmp_path / "data" / SECRET_KEY_FILE
    start, keys = threading.Barrier(8), []

    def create() -> None:
        start.wait()
        keys.append(secret_key_load_or_create(path))

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1 and len(keys[0]) >= 50
    assert [child.name for child in path.parent.iterdir()] == [SECRET_KEY_FILE]  # no temporary file left
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700


def test_private_dir_create_makes_every_missing_folder_owner_only_and_leaves_existing_ones(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    private_dir_create(tmp_path / "a" / "b")
    assert _mode(tmp_path / "a") == _mode(tmp_path / "a" / "b") == 0o700
    assert _mode(tmp_path) == 0o755

"""The secret key kept in the data dir when SECRET_KEY is not given.

The settings only read it (`secret_key_read`): importing them writes nothing. The commands that set
a deployment up or start it create it once (`secret_key_provide`): `manage.py migrate` and
`bootstrap`, and the server's start (gunicorn's master, before any worker forks), so every worker of
a server signs with the same key. Without either, Django refuses whatever needs a key
(ImproperlyConfigured: "The SECRET_KEY setting must not be empty"): nothing signs with a made-up one.
"""

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from ralphsite.core.env import env_str
from ralphsite.core.paths import private_dir_create

SECRET_KEY_FILE = "secret_key"


def secret_key_read(path: Path) -> str:
    """The key stored at `path`, or "" when there is none yet."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""


def secret_key_load_or_create(path: Path) -> str:
    """Return the key stored at `path`, creating it (mode 0600, its folder 0700) on first use.

    The key is written to a temporary file that is then hard-linked to `path`, which fails when `path`
    exists: two processes starting at once agree on one key (the loser reads the winner's), and no
    reader ever sees a file that is not yet written.
    """
    existing = secret_key_read(path)
    if existing:
        return existing
    private_dir_create(path.parent)
    key = secrets.token_urlsafe(50)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(partial, path)
        except FileExistsError:
            return secret_key_read(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return key


def secret_key_configured() -> bool:
    """Whether this process has a key: SECRET_KEY in the environment, or in settings already loaded (read
    from the data dir, or a test run's own). Never loads the settings (gunicorn's master has none)."""
    if env_str("SECRET_KEY", ""):
        return True
    if not settings.configured:
        return False
    try:
        return bool(settings.SECRET_KEY)
    except ImproperlyConfigured:  # Django's answer for an empty SECRET_KEY
        return False


def secret_key_provide(data_dir: Path) -> None:
    """Unless this process has a key, make sure `data_dir` holds one (created once)."""
    if not secret_key_configured():
        secret_key_load_or_create(data_dir / SECRET_KEY_FILE)

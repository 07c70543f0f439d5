"""The first admin user and its API token, created once by `make run`, and how they are shown."""

import os
import secrets
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.core.paths import private_dir_create
from ralphsite.tokens.services import api_token_create

ADMIN_USERNAME = "admin"
ADMIN_TOKEN_LABEL = "admin (bootstrap / reset_credentials)"


@dataclass(frozen=True)
class AdminCredentials:
    username: str
    password: str
    token: str


def admin_bootstrap() -> AdminCredentials | None:
    """Create the admin user and token on the very first run; None when any superuser exists."""
    user_model = get_user_model()
    with transaction.atomic():
        if user_model.objects.filter(is_superuser=True).exists():
            return None
        password = secrets.token_urlsafe(18)
        user = user_model.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
        minted = api_token_create(user=user, scope=TokenScope.GLOBAL, label=ADMIN_TOKEN_LABEL)
    return AdminCredentials(username=user.get_username(), password=password, token=minted.secret)


def admin_credentials_reset(*, username: str = ADMIN_USERNAME) -> AdminCredentials:
    """Give `username` a new random password and a new global API token; the user's other tokens
    stop working (whoever reset the credentials assumes they leaked)."""
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model.objects.select_for_update().get(username=username)
        password = secrets.token_urlsafe(18)
        user.set_password(password)
        user.save(update_fields=["password"])
        ApiToken.objects.filter(user=user).delete()
        minted = api_token_create(user=user, scope=TokenScope.GLOBAL, label=ADMIN_TOKEN_LABEL)
    return AdminCredentials(username=username, password=password, token=minted.secret)


CREDENTIALS_FILE = "first-run-credentials.txt"


def credentials_file_write(text: str) -> Path:
    """Keep the first-run credentials in the data dir too, readable by the owner only (0600)."""
    private_dir_create(Path(settings.DATA_DIR))  # with PostgreSQL nothing may have written there yet
    path = Path(settings.DATA_DIR) / CREDENTIALS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file keeps its mode through O_CREAT: set it
    with os.fdopen(fd, "w") as handle:
        handle.write(text + "\n")
    return path


# `make run` shows first-run credentials after the server's "ready" line, not before it: bootstrap
# leaves this marker beside the credentials file, the server takes it once it serves.
CREDENTIALS_UNSHOWN = "first-run-credentials.unshown"


def credentials_show_later() -> None:
    (Path(settings.DATA_DIR) / CREDENTIALS_UNSHOWN).touch(mode=0o600)


def credentials_take_unshown() -> str | None:
    """The first-run credentials text if bootstrap left it to be shown (once), else None."""
    marker = Path(settings.DATA_DIR) / CREDENTIALS_UNSHOWN
    try:
        marker.unlink()
    except FileNotFoundError:
        return None
    return (Path(settings.DATA_DIR) / CREDENTIALS_FILE).read_text().rstrip("\n")


def site_base_url() -> str:
    host = os.environ.get("RALPH_HOST", "127.0.0.1")
    port = os.environ.get("RALPH_PORT", "8000")
    return f"http://{host}:{port}"


def credentials_text(credentials: AdminCredentials) -> str:
    base = site_base_url()
    return "\n".join([
        "Ralph Site credentials (shown once; keep them safe):",
        f"  admin:     {base}/admin/   user {credentials.username!r}  password {credentials.password}",
        f"  API token: {credentials.token}",
        f"  API root:  {base}/api/v1/   (header  Authorization: Token {credentials.token})",
        f"  API docs:  {base}/api/docs/",
    ])


def manage_command(name: str) -> str:
    """`manage.py <name>` as it runs when pasted in the current directory: with this interpreter (the
    project's virtualenv, which a bare `python` is not), paths relative when they are below it."""
    def shown(path: Path) -> str:
        relative = os.path.relpath(path)
        return shlex.quote(relative if not relative.startswith("..") else str(path))

    return f"{shown(Path(sys.executable))} {shown(Path(settings.BASE_DIR) / 'manage.py')} {name}"


def ready_text(credentials_text: str | None) -> str:
    """The server's last start-up line, and the first-run credentials when they were just created."""
    lines = [f"Ralph Site ready at {site_base_url()}/ (admin {site_base_url()}/admin/, API {site_base_url()}/api/v1/)"]
    return "\n".join([*lines, credentials_text] if credentials_text else lines)

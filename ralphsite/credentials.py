"""The first admin user and its API token, created once by `make run`."""

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from ralphsite.models import ApiToken, TokenScope
from ralphsite.tokens import api_token_create

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

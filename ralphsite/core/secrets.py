"""The secret key kept in the data dir when SECRET_KEY is not given."""

import os
import secrets
from pathlib import Path


def secret_key_load_or_create(path: Path) -> str:
    """Return the key stored at `path`, creating it (mode 0600) on first use.

    O_EXCL makes two processes starting at once agree on one key: the loser reads the winner's.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key

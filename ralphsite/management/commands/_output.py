import os
import shlex
import sys
from pathlib import Path

from django.conf import settings

from ralphsite.credentials import AdminCredentials


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

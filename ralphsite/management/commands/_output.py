import os

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

from pathlib import Path

from ralphsite.env import env_str

BASE_DIR = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """RALPH_DATA_DIR (default `.ralph/` in the checkout): everything the server writes lives here."""
    return Path(env_str("RALPH_DATA_DIR", str(BASE_DIR / ".ralph"))).expanduser().resolve()

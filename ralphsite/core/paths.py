from pathlib import Path

from ralphsite.core.env import env_str

BASE_DIR = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """RALPH_DATA_DIR (default `.ralph/` in the checkout): everything the server writes lives here."""
    return Path(env_str("RALPH_DATA_DIR", str(BASE_DIR / ".ralph"))).expanduser().resolve()


def data_dir_create(path: Path) -> None:
    """Create the data dir readable by its owner only (0700): it holds the database, the secret key
    and the first-run credentials. An existing directory is left as its owner set it."""
    if not path.exists():
        path.mkdir(parents=True, mode=0o700, exist_ok=True)
        path.chmod(0o700)  # mkdir's mode is filtered by the umask; this is exact

from pathlib import Path

from ralphsite.core.env import env_str

BASE_DIR = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """RALPH_DATA_DIR (default `.ralph/` in the checkout): everything the server writes lives here.

    Reading it creates nothing: the data dir is made by the first command that writes into it
    (`private_dir_create`: migrate, bootstrap, collectstatic, backup, the server's start, an SQLite
    connection)."""
    return Path(env_str("RALPH_DATA_DIR", str(BASE_DIR / ".ralph"))).expanduser().resolve()


def private_dir_create(path: Path) -> None:
    """Create `path` and its missing parents readable by their owner only (0700): the data dir holds the
    database, the secret key and the first-run credentials. An existing directory is left as its owner
    set it."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # another process made it meanwhile: that one set its mode
            continue
        folder.chmod(0o700)  # mkdir's mode is filtered by the umask; this is exact

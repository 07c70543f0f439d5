"""gunicorn settings for `make run`, from the same environment variables the README documents."""

from typing import Any

from django.core.exceptions import ImproperlyConfigured

from ralphsite.core.env import env_int, env_str
from ralphsite.core.paths import data_dir, private_dir_create
from ralphsite.core.secrets import SECRET_KEY_FILE, secret_key_configured, secret_key_provide
from ralphsite.server.upkeep import worker_activity
from ralphsite.server.worker_gc import worker_gc

bind = f"{env_str('RALPH_HOST', '127.0.0.1')}:{env_int('RALPH_PORT', 8000, minimum=1)}"
workers = env_int("RALPH_WORKERS", 2, minimum=1)
# Threaded workers keep HTTP connections alive between an agent's calls (sync workers close each one).
worker_class = "gthread"
threads = env_int("RALPH_THREADS", 4, minimum=1)
keepalive = 30
timeout = 60
# The longest request line gunicorn allows (default 4094): query strings up to ~8 KiB. A longer one is
# a JSON 414 (ralphsite/server/http_errors.py); long searches go in a POST body.
limit_request_line = 8190
accesslog = env_str("RALPH_ACCESS_LOG", "") or None
# gunicorn 25+ opens a control socket in ~/.gunicorn by default; keep it in the data dir so that
# several servers (a second checkout, the benchmark) never share one.
control_socket = str(data_dir() / "gunicorn.ctl")


def on_starting(server: Any) -> None:
    """In the master, before the workers fork and read the settings: the data dir (0700: the control
    socket, backups and the first-run marker go there) and, unless SECRET_KEY is set, its secret key, made
    once here so every worker signs with the same one (`make run`'s migrate made both already)."""
    private_dir_create(data_dir())
    secret_key_provide(data_dir())


def post_worker_init(worker: Any) -> None:
    """Each worker runs its upkeep (SQLite checkpoints, apps' jobs) in a thread, never inside a request,
    and answers the requests gunicorn itself refuses in the API's JSON error shape. A worker whose
    settings have no secret key (read before on_starting made it: `--preload`) does not boot."""
    from ralphsite.server.http_errors import json_errors_install
    from ralphsite.server.upkeep import upkeep_start

    if not secret_key_configured():
        raise ImproperlyConfigured(f"The settings have no secret key: they were read before the start made "
                                   f"{data_dir() / SECRET_KEY_FILE}. Start the server again, or set SECRET_KEY.")
    upkeep_start()
    json_errors_install()
    if worker.age == worker.cfg.workers:  # the last worker of the start (restarted ones are older)
        _ready_announce()


def _ready_announce() -> None:
    """`make run`'s last line once the server serves: where, then first-run credentials if just made."""
    from ralphsite.tokens.credentials import credentials_take_unshown, ready_text

    print(ready_text(credentials_take_unshown()), flush=True)


def pre_request(worker: Any, req: Any) -> None:
    """The background thread's upkeep waits for the worker to be idle (upkeep.py)."""
    worker_activity.request_started()


def post_request(worker: Any, req: Any, environ: dict[str, Any], resp: Any) -> None:
    """After a worker's first requests, its warm heap is frozen out of garbage collection (worker_gc.py)."""
    worker_activity.request_finished()
    worker_gc.request_finished()

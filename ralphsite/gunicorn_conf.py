"""gunicorn settings for `make run`, from the same environment variables the README documents."""

from ralphsite.env import env_int, env_str

bind = f"{env_str('RALPH_HOST', '127.0.0.1')}:{env_int('RALPH_PORT', 8000, minimum=1)}"
workers = env_int("RALPH_WORKERS", 2, minimum=1)
worker_class = "sync"
# Keep-alive lets agents reuse one TCP connection across calls.
keepalive = 5
timeout = 60
accesslog = env_str("RALPH_ACCESS_LOG", "") or None

"""Server machinery: how a gunicorn worker runs the project, none of it needed by tests or commands.

* `gunicorn_conf`: the `make run` server (gthread workers, keep-alive, request hooks).
* `wal_checkpointer`: SQLite WAL checkpoints and deferrable upkeep in a background thread per
  worker (insert p99 7.5 → 4.1 ms).
* `worker_gc`: freezes a warm worker's heap out of garbage collection (max 53-61 → 9-10 ms).
* `bench_wsgi`: the benchmark's WSGI entry with a bare HTTP floor.
"""

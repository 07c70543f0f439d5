"""Server machinery: how a gunicorn worker runs the project, none of it needed by tests or commands.

* `gunicorn_conf`: the `make run` server (gthread workers, keep-alive, request hooks).
* `upkeep`: a background thread per worker for the apps' deferrable jobs, one host at a time where
  a job says so (advisory locks), and SQLite's WAL checkpoints (insert p99 7.5 → 4.1 ms).
* `worker_gc`: freezes a warm worker's heap out of garbage collection (max 53-61 → 9-10 ms).
* `chunked_body`: chunked request bodies read (Django saw them empty), within the body limit.
* `http_errors`: the requests gunicorn refuses itself (request line too long, bad headers) answered
  in the API's JSON error shape.
* `bench_wsgi`: the benchmark's WSGI entry with a bare HTTP floor.
"""

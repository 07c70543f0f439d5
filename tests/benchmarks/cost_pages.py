"""The cost pages' server time in-process (Django's test client, no HTTP), on a SQLite database seeded
like `make bench`'s scale phase: 200,000 usage rows over 10 sessions (20,000 each, all today, one
model) and ledger events over the same sessions, through `seed.bulk_seed` (the database's triggers
fire as for any insert). Prints the median of `--samples` runs per page, after one warm-up.

    .venv/bin/python -m tests.benchmarks.cost_pages --database /tmp/cost.db --seed   # then again without

Seeding the same file once and measuring before and after a change (`migrate` in between) compares
the two on the same rows."""

import argparse
import os
import statistics
import time
from pathlib import Path

SESSIONS = 10


def _setup(database: Path) -> None:
    os.environ.update({"DATABASE_URL": f"sqlite:///{database}", "RALPH_DATA_DIR": str(database.parent),
                       "DJANGO_SETTINGS_MODULE": "ralphsite.settings", "DEBUG": "0",
                       "RALPH_API_THROTTLE_RATE": "100000000/min"})
    import django

    django.setup()


def _seed(*, usage_rows: int, events: int) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from ledger_app.models import LedgerEvent, TokenUsage
    from sessions_app.models import Session
    from tests.benchmarks.seed import bulk_seed

    call_command("migrate", verbosity=0)
    sessions = [Session.objects.create(user_request=f"benchmark u{i}", project_path="/bench").pk
                for i in range(SESSIONS)]
    for model, total, overrides in ((TokenUsage, usage_rows, {"model": "bench-model"}),
                                    (LedgerEvent, events, {"type": "x-bench"})):
        result = bulk_seed(model=model, parent_model=Session, parent_ids=sessions, total=total, overrides=overrides)
        print(f"seeded {result.rows:,} rows into {result.table} in {result.seconds:.1f} s")
    get_user_model().objects.create_superuser(username="bench", password=None)


def _measure(samples: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from ralphsite.core.models import TokenScope
    from ralphsite.tokens.services import api_token_create
    from sessions_app.models import Session

    session = Session.objects.order_by("started_at", "pk").first().pk
    user = get_user_model().objects.get(username="bench")
    admin = Client(HTTP_HOST="localhost")
    admin.force_login(user)
    tokens = {scope: api_token_create(user=user, scope=scope, session_id=session if scope == TokenScope.SESSION
                                      else None).secret for scope in (TokenScope.GLOBAL, TokenScope.SESSION)}
    pages = [("session console", admin, f"/admin/sessions_app/session/{session}/change/", {}),
             ("cost view of the session", admin, "/admin/ledger_app/tokenusage/", {"session": session}),
             ("dashboard", admin, "/admin/", {})]
    for name in ("daily-cost", "model-usage"):
        for scope, secret in tokens.items():
            api = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Token {secret}")
            pages.append((f"stats/{name} ({scope} token)", api, f"/api/v1/stats/{name}/", {}))
    for label, client, path, params in pages:
        times = []
        for _ in range(samples + 1):
            started = time.perf_counter()
            response = client.get(path, params)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (path, response.status_code)
        print(f"{label:40} {statistics.median(times[1:]):8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--seed", action="store_true", help="migrate and seed the (new) database first")
    parser.add_argument("--usage-rows", type=int, default=200_000)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    _setup(args.database.resolve())
    if args.seed:
        _seed(usage_rows=args.usage_rows, events=args.events)
    _measure(args.samples)


if __name__ == "__main__":
    main()

"""The scale-out benchmark's database side, run as a subprocess pointed at one phase's database.

    python -m tests.benchmarks.scale_out_check token              # prints a new global API token
    python -m tests.benchmarks.scale_out_check facts SESSION_ID…  # prints the facts the invariants need (JSON)

The load generator itself never imports Django: one run measures PostgreSQL and SQLite phases, and a
Django process is bound to one database.
"""

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from decimal import Decimal
from typing import Any

BENCH_USERNAME = "bench-scale"


def token_create() -> str:
    from django.contrib.auth import get_user_model

    from ralphsite.core.models import TokenScope
    from ralphsite.tokens.services import api_token_create

    user, _ = get_user_model().objects.get_or_create(username=BENCH_USERNAME,
                                                     defaults={"is_staff": True, "is_superuser": True})
    return api_token_create(user=user, scope=TokenScope.GLOBAL, label="scale-out benchmark").secret


def _usage_rows_sum(session_id: str) -> dict[str, str]:
    """Tokens and cost of one session's calls: its token usage rows, the one book its totals add up
    (events, attempts and invocations carrying usage write their call there, issue #15 §3)."""
    from django.db.models import Sum

    from ledger_app.models import TokenUsage

    sums = TokenUsage.objects.filter(session_id=session_id).aggregate(
        tokens_in=Sum("input_tokens"), tokens_out=Sum("output_tokens"), cost=Sum("cost_usd"))
    return {"tokens_input": str(sums["tokens_in"] or 0), "tokens_output": str(sums["tokens_out"] or 0),
            "cost_usd": str(Decimal(sums["cost"] or 0))}


def _ledger_verify() -> dict[str, Any]:
    from django.core.management import call_command, get_commands

    if "ledger_verify" not in get_commands():
        return {"available": False}
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            call_command("ledger_verify")
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return {"available": True, "exit_code": code, "output": (out.getvalue() + err.getvalue())[-500:]}


def facts(session_ids: list[str]) -> dict[str, Any]:
    from django.db.models import Count

    from ledger_app.models import LedgerEvent
    from sessions_app.models import Session, Signal, Task

    sessions: dict[str, Any] = {}
    for session in Session.objects.filter(pk__in=session_ids):
        sessions[session.pk] = {
            "totals": {"tokens_input": str(session.total_tokens_input),
                       "tokens_output": str(session.total_tokens_output),
                       "cost_usd": str(Decimal(session.total_cost_usd))},
            "usage_rows": _usage_rows_sum(session.pk),
            "tasks_by_status": dict(Task.objects.filter(session=session).values_list("status")
                                    .annotate(n=Count("pk")).values_list("status", "n")),
            "signals_unprocessed": Signal.objects.filter(session=session, is_processed=False).count(),
        }
    return {
        "sessions": sessions,
        "x_scale_events": LedgerEvent.objects.filter(session_id__in=session_ids, type="x-scale").count(),
        "ledger_verify": _ledger_verify(),
    }


def main(argv: list[str]) -> int:
    import django

    django.setup()
    command, *rest = argv
    if command == "token":
        print(token_create())
    elif command == "facts":
        print(json.dumps(facts(rest)))
    else:
        print(f"unknown command {command!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

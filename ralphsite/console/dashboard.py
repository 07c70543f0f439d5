"""The admin dashboard: what a person sees first on `/admin/`, above the usual app list.

Two halves in one module:

* **selectors** (`running_sessions`, `ended_sessions`, `session_counts`, `task_counts_in_running_sessions`,
  `attention_counts`, `top_issues`, `usage_by_day_and_model`): read queries only, each one
  aggregate query whatever the number of rows, built on the apps' own selectors and on the
  statistics building blocks of `ledger_app.stats` (nothing here repeats their SQL);
* **presentation** (`dashboard_context`): turns those rows into what the
  `admin/dashboard.html` template draws (tables and inline SVG bars and charts);
* **liveness** (`dashboard_etag`): what moves when anything the dashboard shows changes, so the page's
  poll (ralphsite/static/ralphsite/live.js, `RalphAdminSite.live_view`) is answered 304 for two cheap
  queries while nothing did.

Money stays `Decimal` USD (6 places, more when the amount has them) from the database to the page, tokens stay
integers.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from ledger_app import selectors as ledger_selectors
from ledger_app.models import DeadLetterStatus
from ledger_app.stats.framework import usd_units_sum
from ralphsite.core.money import units_to_usd, usd_shown
from sessions_app import selectors as session_selectors
from sessions_app.models import Question, QuestionStatus, Session, SessionStatus, Signal, Task, TaskStatus

ZERO_USD = usd_shown(0)
DAYS_CHARTED = 14
RUNNING_SHOWN = 25
ENDED_SHOWN = 10
ENDED_UNFINISHED = (SessionStatus.FAILED, SessionStatus.STOPPED, SessionStatus.ABORTED)
ISSUES_SHOWN = 5
OPEN_QUESTION_STATUSES = (QuestionStatus.UNANSWERED, QuestionStatus.RESEARCH_NEEDED)


def usd(units: int | Decimal | None) -> Decimal:
    """Whole 1e-10 USD (what `usd_units_sum` returns) as Decimal USD, 6 places or more when it has them."""
    return usd_shown(units_to_usd(units or 0))


# -- selectors -----------------------------------------------------------------------------------


def interrupted_sessions() -> QuerySet[Session]:
    """Running sessions idle past the threshold `GET sessions/interrupted/` uses by default."""
    return session_selectors.sessions_interrupted(idle_seconds=session_selectors.DEFAULT_IDLE_SECONDS)


def running_sessions(*, limit: int = RUNNING_SHOWN) -> list[dict[str, Any]]:
    """The most recently active running sessions, each flagged `interrupted` (one query)."""
    interrupted = interrupted_sessions().filter(pk=OuterRef("pk"))
    return list(
        session_selectors.session_list().filter(status=SessionStatus.RUNNING)
        .order_by("-last_activity_at", "-pk")
        .values("id", "key", "status", "state", "project_path", "current_iteration", "max_iterations",
                "current_phase", "current_agent", "total_tokens_input", "total_tokens_output", "total_cost_usd",
                "last_activity_at")
        .annotate(total_tokens=F("total_tokens_input") + F("total_tokens_output"),
                  interrupted=Exists(interrupted))[:limit])


def ended_sessions(*, limit: int = ENDED_SHOWN) -> list[dict[str, Any]]:
    """The sessions that ended without completing (failed, stopped, aborted), the most recent first,
    with their exit reasons and how many signals they ended without taking (one query, on the
    (status, last_activity_at) index)."""
    ignored = (Signal.objects.filter(session=OuterRef("pk"), is_processed=False).order_by()
               .values("session").annotate(n=Count("pk")).values("n"))
    return list(session_selectors.session_list().filter(status__in=ENDED_UNFINISHED)
                .order_by("-last_activity_at", "-pk")
                .values("id", "key", "status", "exit_reason", "total_cost_usd", "ended_at", "last_activity_at")
                .annotate(ignored_signals=Coalesce(Subquery(ignored), 0))[:limit])


def session_counts() -> dict[str, int]:
    """How many sessions run, and how many of them look interrupted (one query)."""
    interrupted = interrupted_sessions().values("pk")
    counts = session_selectors.session_list().aggregate(
        running=Count("pk", filter=Q(status=SessionStatus.RUNNING)),
        interrupted=Count("pk", filter=Q(pk__in=interrupted)))
    return {name: value or 0 for name, value in counts.items()}


def task_counts_in_running_sessions() -> dict[str, int]:
    """Tasks of the running sessions per status, every status present (one query)."""
    counts = dict.fromkeys(TaskStatus.values, 0)
    rows = (Task.objects.filter(session__status=SessionStatus.RUNNING).order_by()
            .values("status").annotate(n=Count("pk")).values_list("status", "n"))
    counts.update(rows)
    return counts


def attention_counts() -> dict[str, int]:
    """Open questions, unprocessed signals and pending dead letters, all sessions (three counts).

    sessions_app has no question/signal list selectors, so these read the models directly."""
    return {
        "open_questions": Question.objects.filter(status__in=OPEN_QUESTION_STATUSES).count(),
        "unprocessed_signals": Signal.objects.filter(is_processed=False, expired_at__isnull=True).count(),
        "pending_dead_letters": ledger_selectors.dead_letter_list().filter(status=DeadLetterStatus.PENDING).count(),
    }


def dashboard_change_marker() -> dict[str, Any]:
    """What moves when anything on the dashboard changes (two aggregate queries): every write that
    belongs to a session moves its `last_activity_at` (ralphsite.core.activity), a write to a session its
    `updated_at`; the count of sessions that look interrupted moves with time alone; dead letters of no
    session are counted."""
    cutoff = timezone.now() - timedelta(seconds=session_selectors.DEFAULT_IDLE_SECONDS)
    marker = session_selectors.session_list().aggregate(
        activity=Max("last_activity_at"), updated=Max("updated_at"), sessions=Count("pk"),
        interrupted=Count("pk", filter=Q(status=SessionStatus.RUNNING, last_activity_at__lt=cutoff)))
    marker["dead_letters"] = ledger_selectors.dead_letter_list().filter(status=DeadLetterStatus.PENDING).count()
    return marker


def top_issues(*, limit: int = ISSUES_SHOWN) -> list[dict[str, Any]]:
    """The issues reported most often (one query, the session's key joined in)."""
    return list(ledger_selectors.issue_list().order_by("-count", "-last_seen_at", "pk")
                .values("id", "kind", "signature", "count", "task_key", "last_seen_at", "session_id",
                        session_key=F("session__key"))[:limit])


def usage_by_day_and_model(*, since: datetime) -> list[dict[str, Any]]:
    """Token usage from `since`'s UTC day on, per day and model: calls, tokens (input + output, as
    the `daily-cost` statistic counts them) and cost, exact to 1e-10 USD (one query over the
    usage rollup, `ledger_app.usage_days`, not over every call)."""
    rows = (ledger_selectors.usage_day_list().filter(day__gte=since.astimezone(UTC).date())
            .values("day", "model").order_by("day", "model")
            .annotate(calls=Sum("calls"), tokens=Sum(F("input_tokens") + F("output_tokens")),
                      usd_units=usd_units_sum()))
    return [{"day": row["day"], "model": row["model"], "calls": row["calls"], "tokens": int(row["tokens"] or 0),
             "cost_usd": usd(row["usd_units"])} for row in rows]


# -- presentation --------------------------------------------------------------------------------


def compact(number: int) -> str:
    """12345 → "12.3k", 4500000 → "4.5M": labels short enough to sit on a bar."""
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if number >= size:
            return f"{number / size:.1f}".removesuffix(".0") + suffix
    return str(number)


def money_label(amount: Decimal) -> str:
    if not amount:
        return ""
    if amount < Decimal("0.01"):
        return "<$0.01"
    return f"${amount.quantize(Decimal('0.01')):,}"


@dataclass(frozen=True)
class Bar:
    x: int
    y: int
    width: int
    height: int
    label: str
    value_label: str
    title: str
    label_x: int
    value_y: int


@dataclass(frozen=True)
class BarChart:
    """An SVG bar chart laid out on the server: the template only draws the rectangles."""

    title: str
    total: str
    maximum: str
    bars: list[Bar]
    width: int
    height: int
    baseline: int
    empty: bool


SLOT, BAR, PLOT_TOP, PLOT_HEIGHT, AXIS = 44, 30, 16, 120, 22


def bar_chart(*, title: str, days: list[date], values: list[Any], total: str,
              label: Callable[[Any], str], describe: Callable[[Any], str]) -> BarChart:
    highest = max(values, default=0)
    bars = []
    for index, (day, value) in enumerate(zip(days, values, strict=True)):
        height = max(1, round(PLOT_HEIGHT * value / highest)) if value else 0  # a value is never lost
        x = index * SLOT + (SLOT - BAR) // 2
        bars.append(Bar(x=x, y=PLOT_TOP + PLOT_HEIGHT - height, width=BAR, height=height,
                        label=day.strftime("%d %b") if index in (0, len(days) - 1) or day.day == 1
                        else day.strftime("%d"),
                        value_label=label(value), title=f"{day:%Y-%m-%d}: {describe(value)}",
                        label_x=x + BAR // 2, value_y=PLOT_TOP + PLOT_HEIGHT - height - 4))
    return BarChart(title=title, total=total, maximum=describe(highest), bars=bars, width=SLOT * len(days),
                    height=PLOT_TOP + PLOT_HEIGHT + AXIS, baseline=PLOT_TOP + PLOT_HEIGHT, empty=not highest)


def usage_charts(*, today: date) -> dict[str, Any]:
    days = [today - timedelta(days=offset) for offset in range(DAYS_CHARTED - 1, -1, -1)]
    since = datetime.combine(days[0], time.min, tzinfo=UTC)
    cost_by_day = dict.fromkeys(days, ZERO_USD)
    tokens_by_day = dict.fromkeys(days, 0)
    by_model: dict[str, dict[str, Any]] = {}
    for row in usage_by_day_and_model(since=since):
        day = row["day"]
        if day in cost_by_day:  # a clock running ahead of the database's could add tomorrow
            cost_by_day[day] += row["cost_usd"]
            tokens_by_day[day] += row["tokens"]
        model = by_model.setdefault(row["model"], {"model": row["model"], "calls": 0, "tokens": 0,
                                                   "cost_usd": ZERO_USD})
        model["calls"] += row["calls"]
        model["tokens"] += row["tokens"]
        model["cost_usd"] += row["cost_usd"]
    models = sorted(by_model.values(), key=lambda m: (-m["cost_usd"], -m["tokens"], m["model"]))
    top_cost = max((m["cost_usd"] for m in models), default=ZERO_USD)
    for model in models:
        model["tokens_display"] = f"{model['tokens']:,}"
        model["percent"] = f"{model['cost_usd'] * 100 / top_cost:.2f}" if top_cost else "0"
    total_cost = sum(cost_by_day.values(), ZERO_USD)
    total_tokens = sum(tokens_by_day.values())
    return {
        "first_day": days[0], "last_day": days[-1], "days": DAYS_CHARTED,
        "cost_chart": bar_chart(title="Cost per day (USD)", days=days, values=list(cost_by_day.values()),
                                total=f"{total_cost} USD", label=money_label, describe=lambda v: f"{v} USD"),
        "tokens_chart": bar_chart(title="Tokens per day (input + output)", days=days,
                                  values=list(tokens_by_day.values()), total=f"{total_tokens:,} tokens",
                                  label=lambda v: compact(v) if v else "", describe=lambda v: f"{v:,} tokens"),
        "cost_by_model": models,
        "total_cost": total_cost,
        "total_tokens": total_tokens,
    }


def changelist(model: str, **filters: str) -> str:
    url = reverse(f"admin:{model}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


def dashboard_etag(request: HttpRequest) -> str:
    """The dashboard's ETag for this person today (the charts end today)."""
    marker = dashboard_change_marker()
    token = "|".join(str(part) for part in (request.user.pk, timezone.now().astimezone(UTC).date(),
                                            *(marker[name] for name in sorted(marker))))
    return '"' + hashlib.sha256(token.encode()).hexdigest()[:24] + '"'


def dashboard_context(request: HttpRequest) -> dict[str, Any]:
    """Everything the dashboard shows, limited to what the user may view: a constant number of
    queries (at most ten) whatever the number of rows."""
    can = request.user.has_perm
    now = timezone.now()
    context: dict[str, Any] = {"idle_minutes": session_selectors.DEFAULT_IDLE_SECONDS // 60}
    if can("sessions_app.view_session"):
        sessions = running_sessions()
        for session in sessions:
            session["url"] = reverse("admin:sessions_app_session_change", args=[session["id"]])
            session["total_tokens_display"] = f"{session['total_tokens']:,}"
        ended = ended_sessions()
        for session in ended:
            session["url"] = reverse("admin:sessions_app_session_change", args=[session["id"]])
        cutoff = now - timedelta(seconds=session_selectors.DEFAULT_IDLE_SECONDS)
        context.update(
            running_sessions=sessions, session_counts=session_counts(), ended_sessions=ended,
            ended_url=changelist("sessions_app_session", status__in=",".join(ENDED_UNFINISHED)),
            running_url=changelist("sessions_app_session", status__exact=SessionStatus.RUNNING),
            interrupted_url=changelist("sessions_app_session", status__exact=SessionStatus.RUNNING,
                                       last_activity_at__lt=cutoff.isoformat()))
    if can("sessions_app.view_task"):
        counts = task_counts_in_running_sessions()
        total = sum(counts.values())
        by_status, offset = [], 0.0
        for status, label in TaskStatus.choices:
            share = counts[status] * 100 / total if total else 0.0
            by_status.append({"status": status, "label": label, "count": counts[status], "percent": f"{share:.2f}",
                              "offset": f"{offset:.2f}"})  # where its bar starts in the stacked bar
            offset += share
        context["tasks"] = {
            "total": total,
            "by_status": by_status,
            "url": changelist("sessions_app_task"),
        }
    attention = []
    if can("sessions_app.view_question") or can("sessions_app.view_signal") or can("ledger_app.view_deadletter"):
        counts = attention_counts()
        for perm, name, label, url in (
            ("sessions_app.view_question", "open_questions", "open questions",
             changelist("sessions_app_question", status__in=",".join(OPEN_QUESTION_STATUSES))),
            ("sessions_app.view_signal", "unprocessed_signals", "unprocessed signals",
             changelist("sessions_app_signal", is_processed__exact="0")),
            ("ledger_app.view_deadletter", "pending_dead_letters", "pending dead letters",
             changelist("ledger_app_deadletter", status__exact=DeadLetterStatus.PENDING)),
        ):
            if can(perm):
                attention.append({"name": name, "label": label, "count": counts[name], "url": url})
    context["attention"] = attention
    if can("ledger_app.view_issue"):
        issues = top_issues()
        for issue in issues:
            issue["url"] = reverse("admin:ledger_app_issue_change", args=[issue["id"]])
        context.update(top_issues=issues, issues_url=changelist("ledger_app_issue"))
    if can("ledger_app.view_tokenusage"):
        context["usage"] = {**usage_charts(today=now.astimezone(UTC).date()),
                            "url": changelist("ledger_app_tokenusage")}
    return {"dashboard": context}

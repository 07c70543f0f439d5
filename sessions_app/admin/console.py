"""The session console: the session's admin page as an operator sees it.

A read-only header (what the loop is doing now), the buttons that steer it (each one service call,
as the API's verb), and panels. sessions_app draws its own panels (open questions, pending signals,
recent failures, the task graph); the other apps add theirs with `register_console_panel` from
their admin modules (the ledger's live activity feed and costs, the session's conversations), since
sessions_app imports neither of them.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import models
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from ralphsite.core.errors import InvalidInput
from ralphsite.core.search.backends import SearchFilters, search_kinds_viewable, search_page
from ralphsite.core.search.sources import search_source
from ralphsite.core.search.terms import QueryTooLong, parse_query
from ralphsite.core.service_admin import OperatorAction, operator_name
from sessions_app import selectors
from sessions_app.admin.task_graph import status_legend, task_graph_layout
from sessions_app.models import (
    FINISHED_SESSION_STATUSES,
    OrchestratorState,
    Session,
    SessionStatus,
    SignalType,
)
from sessions_app.services.questions import signal_create
from sessions_app.services.sessions import session_finish, session_resume


@dataclass(frozen=True)
class ConsolePanel:
    """One box of the console: `template` drawn with `context(request, session)`; None hides it.
    `column` is "main" (beside the feed), "side" (the narrow right column) or "wide" (below both)."""

    name: str
    template: str
    context: Callable[[HttpRequest, Session], dict[str, Any] | None]
    column: str = "side"
    order: int = 50


CONSOLE_PANELS: dict[str, ConsolePanel] = {}


def register_console_panel(panel: ConsolePanel) -> None:
    CONSOLE_PANELS[panel.name] = panel  # by name: importing an admin module twice adds nothing twice


def console_panels(request: HttpRequest, session: Session) -> dict[str, list[dict[str, Any]]]:
    columns: dict[str, list[dict[str, Any]]] = {"main": [], "side": [], "wide": []}
    for panel in sorted(CONSOLE_PANELS.values(), key=lambda panel: (panel.order, panel.name)):
        context = panel.context(request, session)
        if context is not None:
            columns[panel.column].append({"name": panel.name, "template": panel.template, **context})
    return columns


def session_is_idle(session: Session) -> bool:
    """Running, and quiet for longer than GET sessions/interrupted/ allows by default."""
    idle = timedelta(seconds=selectors.DEFAULT_IDLE_SECONDS)
    return session.status == SessionStatus.RUNNING and session.last_activity_at < timezone.now() - idle


def session_header(session: Session) -> dict[str, Any]:
    return {"interrupted": session_is_idle(session), "finished": session.status in FINISHED_SESSION_STATUSES,
            "tokens": f"{session.total_tokens_input + session.total_tokens_output:,}",
            "idle_minutes": selectors.DEFAULT_IDLE_SECONDS // 60}


# -- one live model: the page is drawn from regions, and a poll answers the same regions -----------

HEADER_TEMPLATE = "admin/sessions_app/session/console_header.html"
ACTIONS_TEMPLATE = "admin/ralphsite/operator_actions.html"
# Bumped when what a region draws changes, so a page open across a deploy gets the new drawing.
REGIONS_VERSION = "1"


def console_etag(*, session_id: str, user_id: Any, questions_page: int = 1) -> str | None:
    """The console's ETag for this person and this page of its questions (one query, the session's row):
    it changes whenever anything the console draws from the database changes
    (selectors.session_change_marker), and when the session turns idle (the only change time makes by
    itself; ages are counted in the browser). None: no session."""
    marker = selectors.session_change_marker(session_id=session_id)
    if marker is None:
        return None
    idle_since = timezone.now() - timedelta(seconds=selectors.DEFAULT_IDLE_SECONDS)
    idle = marker["status"] == SessionStatus.RUNNING and marker["last_activity_at"] < idle_since
    token = "|".join((REGIONS_VERSION, str(user_id), str(questions_page), marker["last_activity_at"].isoformat(),
                      marker["updated_at"].isoformat(), str(idle)))
    return '"' + hashlib.sha256(token.encode()).hexdigest()[:24] + '"'


def console_regions(request: HttpRequest, session: Session, *, operator_actions: list[dict[str, Any]],
                    links: dict[str, str]) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
    """Every part of the console that changes, drawn as HTML and keyed by name: the header, the buttons
    and each panel. The page is built from them and the live view answers them
    (SessionAdmin.live_view), so what a poll brings is exactly what a reload would show.

    Returns (regions, columns): columns are the panels per column, each with its `html`."""
    # A Stop or Pause waiting for the loop; once the session ended, the ones it ended without taking
    # (they expired then: sessions_app.services.questions).
    unpolled = (selectors.session_expired_signals if session.status in FINISHED_SESSION_STATUSES
                else selectors.session_pending_signals)(session_id=session.pk)
    steering = [signal for signal in unpolled if signal.type in (SignalType.STOP, SignalType.PAUSE)]
    context = {"session": session, "header": session_header(session), "steering": steering,
               "work": selectors.session_current_work(session_id=session.pk),
               "loop": selectors.session_latest_loop_run(session_id=session.pk),
               "operator_actions": operator_actions, **links}
    regions = {"header": render_to_string(HEADER_TEMPLATE, context, request),
               "actions": render_to_string(ACTIONS_TEMPLATE, context, request)}
    columns = console_panels(request, session)
    for panels in columns.values():
        for panel in panels:
            panel["html"] = regions[panel["name"]] = render_to_string(panel["template"], {**context, "panel": panel},
                                                                      request)
    return regions, columns


# -- the buttons: each is the API's verb ---------------------------------------------------------

def _signal(kind: str, *, needs: str = "") -> Callable[[HttpRequest, Session, dict[str, str]], str]:
    """Send a signal of `kind`; `needs` is what to ask for when the message is required and missing."""
    def send(request: HttpRequest, session: Session, inputs: dict[str, str]) -> str:
        message = inputs.get("message", "")
        if needs and not message:
            raise InvalidInput(needs, details={"message": ["required"]})
        signal_create(data={"session": session, "type": kind, "message": message}, actor=operator_name(request))
        return f"{kind.capitalize()} signal sent: the orchestrator gets it on its next poll."
    return send


RESUME_SAYS = ("Resume marks the session running again where it stopped (sessions/{id}/resume/). It starts no "
               "process: a loop must run (or be started) against this session to go on, and the exit reason "
               "it had stays in its history.")


def _resume(request: HttpRequest, session: Session, inputs: dict[str, str]) -> str:
    point = session_resume(session=session, agent=operator_name(request))
    return (f"Session marked running again at iteration {point['iteration']} (next task: "
            f"{point['next_task'] or 'none'}). No process was started: start the loop against this session "
            f"if none runs.")


def _finish(request: HttpRequest, session: Session, inputs: dict[str, str]) -> str:
    """No default outcome: the person chooses the final status and says why."""
    status, reason = inputs.get("status", ""), inputs.get("exit_reason", "")
    if status not in FINISHED_SESSION_STATUSES:
        raise InvalidInput("Choose the session's final status." if not status else f"{status!r} is not a final "
                           "status.", details={"status": [status or "required"]})
    if not reason:
        raise InvalidInput("Say why the session ends (exit reason).", details={"exit_reason": ["required"]})
    session_finish(session=session, status=status, exit_reason=reason, agent=operator_name(request))
    return f"Session finished: {status} ({reason})."


def _running(session: Session) -> bool:
    return session.status == SessionStatus.RUNNING


def _paused(session: Session) -> bool:
    """Paused by its orchestrator's state, or held by a Pause no resume signal has lifted yet."""
    if not _running(session):
        return False
    holding = selectors.session_signal_holding(session_id=session.pk)
    return session.state == OrchestratorState.PAUSED or (holding is not None and holding["type"] == SignalType.PAUSE)


def _pausable(session: Session) -> bool:
    return _running(session) and not _paused(session)


def _resumable(session: Session) -> bool:
    return session.status not in (SessionStatus.RUNNING, SessionStatus.COMPLETED) or session_is_idle(session)


FINAL_STATUSES = (("", "final status…"),
                  *((status.value, status.label) for status in SessionStatus if status in FINISHED_SESSION_STATUSES))

SESSION_ACTIONS = (
    OperatorAction("pause", "Pause", _signal(SignalType.PAUSE), shown=_pausable,
                   help="Send a pause signal (signals/ with type pause): the orchestrator pauses at its next poll, "
                        "and no task is handed out until a resume signal is sent."),
    # A pause holds until a signal of its own type lifts it: an info or steer signal does not.
    OperatorAction("continue", "Continue", _signal(SignalType.RESUME), style="primary", shown=_paused,
                   help="Send a resume signal: the pause ends and a paused orchestrator goes on at its next poll."),
    OperatorAction("steer", "Steer", _signal(SignalType.STEER, needs="Write the message to steer with."),
                   shown=_running, inputs=(("message", "a message for the orchestrator"),),
                   help="Send a steer signal with your message."),
    OperatorAction("stop", "Stop", _signal(SignalType.STOP, needs="Say why the loop should stop."), style="danger",
                   shown=_running, inputs=(("message", "why stop (required)"),),
                   help="Send a stop signal with your reason: the orchestrator stops at its next poll and finishes "
                        "the session.",
                   confirm="Stop the loop? It finishes the session at its next poll; this cannot be undone."),
    OperatorAction("resume", "Resume", _resume, style="primary", shown=_resumable, help=RESUME_SAYS,
                   confirm=RESUME_SAYS + " Mark it running?"),
    OperatorAction("finish", "Finish", _finish, shown=_running,
                   inputs=(("status", "final status", FINAL_STATUSES), ("exit_reason", "exit reason (required)")),
                   help="Record the session's outcome now (sessions/{id}/finish/), without waiting for the loop.",
                   confirm="Finish the session now with this outcome? A completed session cannot be resumed."),
)


# -- searching the session's records (above the panels: a poll never redraws it) ------------------

SEARCH_HITS_SHOWN = 20  # hits a page


def _page_number(request: HttpRequest, name: str) -> int:
    """The page `?name=N` asks for; anything but a positive number is the first page."""
    value = request.GET.get(name, "")
    return int(value) if value.isdigit() and int(value) > 0 else 1


def _viewable(request: HttpRequest) -> Callable[[type[models.Model]], bool]:
    def permits(model: type[models.Model]) -> bool:
        return request.user.has_perm(f"{model._meta.app_label}.view_{model._meta.model_name}")
    return permits


def _search_page_url(request: HttpRequest, page: int) -> str:
    """This console with its other parameters (the search, the page of questions) and page `page` of hits."""
    params = request.GET.copy()
    params.pop("hits", None)
    if page > 1:
        params["hits"] = str(page)
    return f"?{params.urlencode()}#rc-search"


def console_search(request: HttpRequest, session: Session) -> dict[str, Any]:
    """The console's search box (`?q=`): the API's full-text search (ralphsite/core/search) within the
    session, over every kind the person may view (its ledger events, task reports, messages and memory),
    the best hits first, a page of them at a time (`&hits=N`: past the last, the last), each with its kind,
    time, snippet and a link to its record."""
    text = request.GET.get("q", "")
    if not text.strip():
        return {"q": text}
    try:
        query = parse_query(text)
    except QueryTooLong as error:
        return {"q": text, "error": str(error)}
    filters = SearchFilters(kinds=search_kinds_viewable(_viewable(request)), session=session.pk)
    page = _page_number(request, "hits")
    count, hits = search_page(query=query, filters=filters, limit=SEARCH_HITS_SHOWN,
                              offset=(page - 1) * SEARCH_HITS_SHOWN)
    if not hits and count:  # a page past the last (the hits were fewer, or the link was made up): the last
        page = (count + SEARCH_HITS_SHOWN - 1) // SEARCH_HITS_SHOWN
        count, hits = search_page(query=query, filters=filters, limit=SEARCH_HITS_SHOWN,
                                  offset=(page - 1) * SEARCH_HITS_SHOWN)
    first = (page - 1) * SEARCH_HITS_SHOWN + 1
    return {"q": text, "count": count, "searched": True, "first": first, "last": first + len(hits) - 1,
            "previous_page_url": _search_page_url(request, page - 1) if page > 1 else "",
            "next_page_url": _search_page_url(request, page + 1) if first + len(hits) <= count else "",
            "hits": [{"hit": hit, "url": reverse(search_source(hit.kind).admin_page,
                                                 args=[getattr(hit, search_source(hit.kind).page_key)])}
                     for hit in hits]}


# -- sessions_app's own panels ---------------------------------------------------------------

QUESTIONS_PER_PAGE = 5  # answer forms a page: more stack into a tower in the narrow column


def questions_page(request: HttpRequest) -> int:
    """The page of open questions the console shows (`?questions=N`; the live view gets the page's own);
    anything but a positive number is the first page."""
    return _page_number(request, "questions")


def _questions(request: HttpRequest, session: Session) -> dict[str, Any]:
    page = questions_page(request)
    questions, count = selectors.session_open_questions(session_id=session.pk, limit=QUESTIONS_PER_PAGE,
                                                        offset=(page - 1) * QUESTIONS_PER_PAGE)
    if not questions and page > 1:  # answered away since the page was drawn: its last page
        page = max((count + QUESTIONS_PER_PAGE - 1) // QUESTIONS_PER_PAGE, 1)
        questions, count = selectors.session_open_questions(session_id=session.pk, limit=QUESTIONS_PER_PAGE,
                                                            offset=(page - 1) * QUESTIONS_PER_PAGE)
    console = reverse("admin:sessions_app_session_change", args=[session.pk])
    first = (page - 1) * QUESTIONS_PER_PAGE + 1
    return {"count": count, "first": first, "last": first + len(questions) - 1,
            "previous_page_url": f"{console}?questions={page - 1}#rc-questions" if page > 1 else "",
            "next_page_url": f"{console}?questions={page + 1}#rc-questions" if first + len(questions) <= count else "",
            "questions": [{"question": question,
                           "answer_url": reverse("admin:sessions_app_question_act", args=[question.pk, "answer"]),
                           "url": reverse("admin:sessions_app_question_change", args=[question.pk])}
                          for question in questions],
            "all_url": reverse("admin:sessions_app_question_changelist") + f"?session={session.pk}"}


def _signals(request: HttpRequest, session: Session) -> dict[str, Any]:
    return {"signals": selectors.session_pending_signals(session_id=session.pk),
            "expired_signals": selectors.session_expired_signals(session_id=session.pk),
            "ended": session.status in FINISHED_SESSION_STATUSES, "status": session.get_status_display(),
            "all_url": reverse("admin:sessions_app_signal_changelist") + f"?session={session.pk}"}


def _failures(request: HttpRequest, session: Session) -> dict[str, Any]:
    failures = selectors.session_recent_failures(session_id=session.pk)
    for failure in failures:
        # To the record's page: a task's and an attempt's are read-only, titled by the task's key.
        meta = failure["object"]._meta
        failure["url"] = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[failure["object"].pk])
    return {"failures": failures,
            "tasks_url": reverse("admin:sessions_app_task_changelist") + f"?session={session.pk}&status__exact=failed"}


def _task_graph(request: HttpRequest, session: Session) -> dict[str, Any]:
    return {"layout": task_graph_layout(selectors.session_task_graph(session=session)), "statuses": status_legend(),
            "graph_url": reverse("admin:sessions_app_session_task_graph", args=[session.pk]),
            "tasks_url": reverse("admin:sessions_app_task_changelist") + f"?session={session.pk}"}


for _panel in (
    ConsolePanel("failures", "admin/sessions_app/session/console_failures.html", _failures, column="side", order=10),
    ConsolePanel("questions", "admin/sessions_app/session/console_questions.html", _questions, column="side",
                 order=20),
    ConsolePanel("signals", "admin/sessions_app/session/console_signals.html", _signals, column="side", order=30),
    ConsolePanel("task_graph", "admin/sessions_app/session/console_task_graph.html", _task_graph, column="wide",
                 order=10),
):
    register_console_panel(_panel)

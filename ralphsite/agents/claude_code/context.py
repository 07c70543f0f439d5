"""What SessionStart gives back to Claude Code (`hookSpecificOutput.additionalContext`): the operator's pending Steer
messages, open questions and the answers given, the plan's next ready tasks and the project's most relevant memory,
in that order, within a size budget (what does not fit is cut at a line and said so)."""

from django.db.models import Case, IntegerField, Value, When

from conversations_app.models import GlobalPattern, Observation
from sessions_app.models import Question, QuestionStatus, Session, Signal, SignalType
from sessions_app.selectors import tasks_ready

CONTEXT_BUDGET_CHARS = 6000
SECTION_ROWS = 8
LINE_MAX_CHARS = 400
_CUT = "[… more in Ralph Site: cut to fit the context budget]"


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_MAX_CHARS else flat[:LINE_MAX_CHARS - 1] + "…"


def _steers(session: Session) -> list[str]:
    signals = Signal.objects.filter(session=session, is_processed=False, type=SignalType.STEER).order_by("sent_at")
    return [f"- {_line(signal.message)}" for signal in signals[:SECTION_ROWS]]


def _questions(project_path: str) -> list[str]:
    unanswered_first = Case(When(status=QuestionStatus.ANSWERED, then=Value(1)), default=Value(0),
                            output_field=IntegerField())
    questions = (Question.objects.filter(session__project_path=project_path)
                 .order_by(unanswered_first, "-created_at")[:SECTION_ROWS])
    return [f"- [{q.status}] {_line(q.text)}" + (f" → {_line(q.answer)}" if q.answer else "") for q in questions]


def _ready_tasks(project_path: str) -> list[str]:
    for session_id in (Session.objects.filter(project_path=project_path, status="running").exclude(tasks=None)
                       .order_by("-started_at").values_list("pk", flat=True)[:5]):
        tasks = list(tasks_ready(session_id=session_id)[:SECTION_ROWS])
        if tasks:
            return [f"- {task.key}: {_line(task.title)}" for task in tasks]
    return []


def _memory(project_path: str) -> list[str]:
    observations = (Observation.objects.filter(session__project_path=project_path)
                    .order_by("-importance", "-created_at")[:SECTION_ROWS])
    patterns = GlobalPattern.objects.order_by("-frequency", "-updated_at")[:3]
    return ([f"- [{o.type}{' ' + o.tool_name if o.tool_name else ''}] {_line(o.content)}" for o in observations]
            + [f"- [pattern {p.pattern_type}] {_line(p.description)}" for p in patterns])


def session_start_context(*, session: Session, budget: int = CONTEXT_BUDGET_CHARS) -> str:
    sections = [
        ("The operator's pending Steer messages", _steers(session)),
        ("Questions (open first) and answers", _questions(session.project_path)),
        ("The plan's next ready tasks", _ready_tasks(session.project_path)),
        ("This project's most relevant memory", _memory(session.project_path)),
    ]
    lines = [f"Ralph Site session {session.pk} (Claude Code session {session.key})."]
    for title, rows in sections:
        if rows:
            lines += ["", f"## {title}", *rows]
    text, used = [], 0
    for line in lines:
        if used + len(line) + 1 > budget - len(_CUT) - 1:
            text.append(_CUT)
            break
        text.append(line)
        used += len(line) + 1
    return "\n".join(text)

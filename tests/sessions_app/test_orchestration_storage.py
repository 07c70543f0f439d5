"""Deletes per seed 003's foreign-key table, database constraints, the graph and backend row locks."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import RestrictedError

from sessions_app.graph import kahn_layers
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackItem,
    Plan,
    PlanSnapshot,
    Question,
    ResearchFinding,
    ResearchSession,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
)
from sessions_app.services.base import lock_rows
from tests.sessions_app.factories import make_batch, make_session, make_task

pytestmark = pytest.mark.django_db


def test_deleting_a_session_cascades_and_sets_null_as_seed_003_says() -> None:
    session = make_session(key="doomed")
    task = make_task(session, "task-1")
    attempt = TaskAttempt.objects.create(task=task, session=session, attempt_number=1)
    research = ResearchSession.objects.create(session=session)
    ResearchFinding.objects.create(research_session=research, finding_type="pattern", title="f")
    plan = Plan.objects.create(key="plan-001", name="p", session=session, research_session=research)
    task.plan = plan
    task.save()
    PlanSnapshot.objects.create(session=session, iteration_number=1, content="c")
    Question.objects.create(session=session, key="Q-1", category="risks", text="?")
    Signal.objects.create(session=session, type="stop")
    AgentInvocation.objects.create(session=session, task=task)
    batch = make_batch(session)
    FeedbackItem.objects.create(batch=batch, issue_key="ISS-1", severity="critical", description="x")
    FeedbackAttachment.objects.create(batch=batch, file_name="a")

    session.delete()

    task.refresh_from_db()
    attempt.refresh_from_db()
    plan.refresh_from_db()
    assert task.session_id is None and attempt.session_id is None  # SET NULL
    assert plan.session_id is None and plan.research_session_id is None  # research cascaded; plan kept
    for model in (ResearchSession, ResearchFinding, PlanSnapshot, Question, Signal, AgentInvocation, FeedbackItem,
                  FeedbackAttachment):
        assert not model.objects.exists(), model


def test_deleting_a_task_cascades_to_attempts_files_and_own_edges_and_unlinks_invocations() -> None:
    session = make_session()
    base = make_task(session, "task-0")
    first = make_task(session, "task-1", depends_on=(base,))
    TaskAttempt.objects.create(task=first, attempt_number=1)
    TaskFile.objects.create(task=first, path="a.py")
    invocation = AgentInvocation.objects.create(session=session, task=first, task_key="task-1")
    child = make_task(session, "task-1a", parent=first)
    first.delete()
    assert not TaskAttempt.objects.exists() and not TaskFile.objects.exists()
    assert not TaskDependency.objects.exists()
    invocation.refresh_from_db()
    child.refresh_from_db()
    assert invocation.task_id is None and invocation.task_key == "task-1"
    assert child.parent_id is None and Task.objects.filter(pk=base.pk).exists()


def test_a_task_depended_on_is_restricted_unless_its_dependents_go_in_the_same_delete() -> None:
    session = make_session()
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,))
    with pytest.raises(RestrictedError), transaction.atomic():
        first.delete()
    Task.objects.filter(pk__in=[first.pk, second.pk]).delete()
    assert not Task.objects.exists() and not TaskDependency.objects.exists()


@pytest.mark.parametrize("make_bad_edge", [
    lambda a, b: TaskDependency.objects.create(task=a, depends_on=a),
    lambda a, b: [TaskDependency.objects.create(task=a, depends_on=b) for _ in range(2)],
], ids=["self-loop", "duplicate"])
def test_the_database_refuses_self_loops_and_duplicate_edges(make_bad_edge) -> None:
    session = make_session()
    a, b = make_task(session, "a"), make_task(session, "b")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_bad_edge(a, b)


def test_kahn_layers_sorts_layers_and_reports_what_sits_on_a_cycle() -> None:
    assert kahn_layers(["c", "a", "b"], [("c", "a"), ("c", "b")]) == ([["a", "b"], ["c"]], [])
    assert kahn_layers(["a", "b", "c", "d"], [("a", "b"), ("b", "a"), ("c", "a")]) == ([["d"]], ["a", "b", "c"])


def test_kahn_layers_takes_an_edge_or_a_node_given_twice_once() -> None:
    """Tasks of no session may share a key (keys are unique per session): their edges come twice."""
    assert kahn_layers(["a", "b", "b"], [("b", "a"), ("b", "a")]) == ([["a"], ["b"]], [])


def test_lock_rows_locks_on_postgresql_and_relies_on_begin_immediate_on_sqlite() -> None:
    queryset = lock_rows(Task.objects.filter(key="x"), skip_locked=True)
    with transaction.atomic():
        compiled = queryset.query.get_compiler(using=queryset.db).as_sql()[0]
    if connection.vendor == "postgresql":
        assert "FOR NO KEY UPDATE OF" in compiled and compiled.endswith("SKIP LOCKED")
    else:
        assert connection.vendor == "sqlite"
        assert "FOR UPDATE" not in compiled

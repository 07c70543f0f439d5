"""Rows for the orchestration tests, made through the ORM."""

from typing import Any

from sessions_app.models import FeedbackBatch, Iteration, Session, Task, TaskDependency


def make_session(**fields: Any) -> Session:
    return Session.objects.create(**{"user_request": "build it", **fields})


def make_task(session: Session, key: str, *, depends_on: tuple[Task, ...] = (), **fields: Any) -> Task:
    task = Task.objects.create(session=session, key=key, **{"title": f"title of {key}", **fields})
    TaskDependency.objects.bulk_create(TaskDependency(task=task, depends_on=d) for d in depends_on)
    return task


def make_batch(session: Session, number: int = 1, timestamp: str = "20260209-143000") -> FeedbackBatch:
    iteration, _ = Iteration.objects.get_or_create(session=session, number=number)
    return FeedbackBatch.objects.create(session=session, iteration=iteration, batch_timestamp=timestamp)

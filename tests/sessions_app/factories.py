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


def make_thousand_tasks(session: Session) -> None:
    """1,000 tasks in 20 waves of 50: waves 1-9 completed, 10 in progress, the rest to do; each task of a
    wave depends on the task of its row in the wave before."""
    tasks = [Task(session=session, key=f"t-{n}", title=f"task {n}", assigned_agent=f"exec-{n % 7}",
                  status="completed" if n < 450 else "in_progress" if n < 500 else "not_started")
             for n in range(1000)]
    Task.objects.bulk_create(tasks)
    TaskDependency.objects.bulk_create(TaskDependency(task=tasks[n], depends_on=tasks[n - 50])
                                       for n in range(50, 1000))

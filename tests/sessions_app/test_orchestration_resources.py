"""The generic list/get/create/update/delete/auth/query-count tests for every orchestration resource."""

import base64
from typing import Any

import pytest

from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Iteration,
    Plan,
    PlanSnapshot,
    Question,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    Signal,
    Task,
    TaskAttempt,
    TaskFile,
)
from tests.api_mixins import APIResourceTests
from tests.sessions_app.factories import make_batch, make_session, make_task

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

PLAIN_LIST_QUERIES = 3  # token auth, count, page


class SessionScoped(APIResourceTests):
    """Resources whose rows hang off one session made per test."""

    list_queries = PLAIN_LIST_QUERIES

    @pytest.fixture(autouse=True)
    def _session(self, db: Any) -> None:
        self.session = make_session(key="resources")


class TestIterationResource(SessionScoped):
    model = Iteration
    basename = "iteration"
    update_payload = {"planning_complete": True, "tasks_defined": 4}

    def make_instance(self, index: int) -> Iteration:
        return Iteration.objects.create(session=self.session, number=index + 1)

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "number": 99}


class TestPlanResource(SessionScoped):
    model = Plan
    basename = "plan"
    update_payload = {"status": "in_progress", "total_tasks": 7}

    def make_instance(self, index: int) -> Plan:
        return Plan.objects.create(key=f"plan-{index:03}", name=f"plan {index}", session=self.session)

    def create_payload(self) -> dict[str, Any]:
        return {"key": "plan-new", "name": "New plan", "plan_type": "feature", "session": self.session.pk}


class TestPlanSnapshotResource(SessionScoped):
    model = PlanSnapshot
    basename = "plansnapshot"
    update_payload = {"content": "# Plan v2"}

    def make_instance(self, index: int) -> PlanSnapshot:
        return PlanSnapshot.objects.create(session=self.session, iteration_number=index + 1, content="# Plan")

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "iteration_number": 50, "content": "# Plan"}


class TestReplanningDeltaResource(SessionScoped):
    model = ReplanningDelta
    basename = "replanningdelta"
    update_payload = {"rationale": "the reviewer found gaps"}

    def make_instance(self, index: int) -> ReplanningDelta:
        iteration = Iteration.objects.create(session=self.session, number=index + 1)
        return ReplanningDelta.objects.create(iteration=iteration, summary=f"delta {index}")

    def create_payload(self) -> dict[str, Any]:
        iteration = Iteration.objects.create(session=self.session, number=77)
        return {"iteration": iteration.pk, "previous_plan_snapshot_ref": "plan.iteration-1", "added_items": "- x"}


class TestResearchSessionResource(SessionScoped):
    model = ResearchSession
    basename = "researchsession"
    update_payload = {"status": "completed"}

    def make_instance(self, index: int) -> ResearchSession:
        return ResearchSession.objects.create(session=self.session)

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk}


class TestResearchFindingResource(SessionScoped):
    model = ResearchFinding
    basename = "researchfinding"
    update_payload = {"priority": "high", "title": "renamed"}

    def make_instance(self, index: int) -> ResearchFinding:
        research = ResearchSession.objects.create(session=self.session)
        return ResearchFinding.objects.create(research_session=research, finding_type="pattern", title=f"f{index}")

    def create_payload(self) -> dict[str, Any]:
        research = ResearchSession.objects.create(session=self.session)
        return {"research_session": research.pk, "finding_type": "blocker", "title": "No tests",
                "evidence": {"files": ["a.py"]}}


class TestTaskResource(SessionScoped):
    model = Task
    basename = "task"
    list_queries = 6  # token auth, count, page, dependencies, files, attempts
    update_payload = {"title": "renamed", "wave": 2, "notes": "careful"}

    def make_instance(self, index: int) -> Task:
        task = make_task(self.session, f"task-{index}")
        TaskFile.objects.create(task=task, path=f"src/{index}.py")
        TaskAttempt.objects.create(task=task, session=self.session, attempt_number=1)
        if index:
            make_task(self.session, f"dep-{index}")
            task.dependencies.create(depends_on=Task.objects.get(session=self.session, key=f"dep-{index}"))
        return task

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "key": "task-new", "title": "T", "objective": "do it"}


class TestTaskAttemptResource(SessionScoped):
    model = TaskAttempt
    basename = "taskattempt"
    update_payload = {"status": "failed", "error_type": "test_failure"}

    def make_instance(self, index: int) -> TaskAttempt:
        task = make_task(self.session, f"task-{index}")
        return TaskAttempt.objects.create(task=task, session=self.session, attempt_number=1)

    def create_payload(self) -> dict[str, Any]:
        return {"task": make_task(self.session, "task-attempted").pk, "implementation_report": "done"}


class TestTaskFileResource(SessionScoped):
    model = TaskFile
    basename = "taskfile"
    update_payload = {"access_type": "read_only"}

    def make_instance(self, index: int) -> TaskFile:
        return TaskFile.objects.create(task=make_task(self.session, f"task-{index}"), path="src/a.py")

    def create_payload(self) -> dict[str, Any]:
        return {"task": make_task(self.session, "task-files").pk, "path": "src/**/*.ts", "is_pattern": True}


class TestQuestionResource(SessionScoped):
    model = Question
    basename = "question"
    update_payload = {"priority": "high", "impact": "blocks task-3"}

    def make_instance(self, index: int) -> Question:
        return Question.objects.create(session=self.session, key=f"Q-TECH-{index:03}", category="technical",
                                       text="Which database?")

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "key": "Q-RISK-001", "category": "risks", "text": "What breaks?"}


class TestFeedbackBatchResource(SessionScoped):
    model = FeedbackBatch
    basename = "feedbackbatch"
    list_queries = 5  # token auth, count, page, items, attachments
    update_payload = {"summary": "two critical issues"}

    def make_instance(self, index: int) -> FeedbackBatch:
        batch = make_batch(self.session, number=index + 1)
        batch.items.create(issue_key="ISS-001", severity="critical", description="broken")
        batch.attachments.create(file_name="shot.png", content=b"png")
        return batch

    def create_payload(self) -> dict[str, Any]:
        iteration = Iteration.objects.create(session=self.session, number=40)
        return {"iteration": iteration.pk, "batch_timestamp": "20260209-143000"}


class TestFeedbackItemResource(SessionScoped):
    model = FeedbackItem
    basename = "feedbackitem"
    update_payload = {"severity": "quality", "suggested_fix": "add a test"}

    def make_instance(self, index: int) -> FeedbackItem:
        return make_batch(self.session, number=index + 1).items.create(
            issue_key="ISS-001", severity="critical", description="broken")

    def create_payload(self) -> dict[str, Any]:
        return {"batch": make_batch(self.session, number=60).pk, "issue_key": "ISS-009",
                "severity": "new_requirement", "description": "add export"}


class TestFeedbackAttachmentResource(SessionScoped):
    model = FeedbackAttachment
    basename = "feedbackattachment"
    update_payload = {"description": "the failing screen"}

    def make_instance(self, index: int) -> FeedbackAttachment:
        return make_batch(self.session, number=index + 1).attachments.create(file_name=f"{index}.txt",
                                                                            content=b"abc", size=3)

    def create_payload(self) -> dict[str, Any]:
        return {"batch": make_batch(self.session, number=61).pk, "file_name": "log.txt",
                "content": base64.b64encode(b"hello").decode(), "content_type": "text/plain"}


class TestSignalResource(SessionScoped):
    model = Signal
    basename = "signal"
    update_payload = {"message": "focus on the API first"}

    def make_instance(self, index: int) -> Signal:
        return Signal.objects.create(session=self.session, type="info", message=f"note {index}")

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "type": "steer", "message": "use PostgreSQL"}


class TestAgentInvocationResource(SessionScoped):
    model = AgentInvocation
    basename = "agentinvocation"
    update_payload = {"status": "success", "output_summary": "two files changed"}

    def make_instance(self, index: int) -> AgentInvocation:
        return AgentInvocation.objects.create(session=self.session, role="executor", prompt=f"p{index}")

    def create_payload(self) -> dict[str, Any]:
        return {"session": self.session.pk, "role": "planner", "agent": "planner", "model": "gpt-5",
                "prompt": "Plan the work"}

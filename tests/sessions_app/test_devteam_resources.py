"""The generic list/get/create/update/delete/auth/query-count tests for every DevTeam resource."""

from typing import Any

import pytest

from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Interview,
    InterviewQuestion,
    LoopRun,
    ProgressSummary,
    SessionPhase,
    SessionStateEntry,
)
from tests.api_mixins import APIResourceTests
from tests.sessions_app.devteam_factories import devteam_interview, devteam_session

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

LIST_QUERIES = 3  # token auth, count, page: the representations name related rows by id only


class TestSessionStateResource(APIResourceTests):
    model = SessionStateEntry
    basename = "sessionstateentry"
    list_queries = LIST_QUERIES
    update_payload = {"value": {"phase": "executing", "n": 2}}

    def make_instance(self, index: int) -> SessionStateEntry:
        return SessionStateEntry.objects.create(session=devteam_session(), key=f"key-{index}", value=index)

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "key": "current_phase", "value": "planning"}


class TestSessionPhaseResource(APIResourceTests):
    model = SessionPhase
    basename = "sessionphase"
    list_queries = LIST_QUERIES
    update_payload = {"features_completed": 3, "resume_point": "FEAT-004"}

    def make_instance(self, index: int) -> SessionPhase:
        return SessionPhase.objects.create(session=devteam_session(), phase_type="coding",
                                           features_attempted=index)

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "phase_type": "initializer", "is_first_run": True}


class TestProgressSummaryResource(APIResourceTests):
    model = ProgressSummary
    basename = "progresssummary"
    list_queries = LIST_QUERIES
    update_payload = {"tests_passing": 40, "files_changed": ["a.py"]}

    def make_instance(self, index: int) -> ProgressSummary:
        return ProgressSummary.objects.create(session=devteam_session(), summary_text=f"summary {index}")

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "summary_text": "3 of 5 done", "tasks_completed": 3,
                "tasks_remaining": 2}


class TestBugResource(APIResourceTests):
    model = Bug
    basename = "bug"
    list_queries = LIST_QUERIES
    update_payload = {"severity": "high", "root_cause": "off by one"}

    def make_instance(self, index: int) -> Bug:
        return Bug.objects.create(session=devteam_session(), description=f"bug {index}")

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "description": "login fails", "severity": "critical",
                "complexity": "simple", "files_changed": ["auth.py"]}


class TestEscalationResource(APIResourceTests):
    model = Escalation
    basename = "escalation"
    list_queries = LIST_QUERIES
    update_payload = {"failure_count": 4}

    def make_instance(self, index: int) -> Escalation:
        return Escalation.objects.create(session=devteam_session(), from_model="haiku", to_model="sonnet",
                                         reason="consecutive_failures", iteration=index)

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "from_model": "sonnet", "to_model": "opus",
                "reason": "complexity_increase", "task_key": "TASK-001", "agent": "api-developer"}


class TestAcceptanceCriterionResource(APIResourceTests):
    model = AcceptanceCriterion
    basename = "acceptancecriterion"
    list_queries = LIST_QUERIES
    update_payload = {"description": "returns 201", "priority": "high"}

    def make_instance(self, index: int) -> AcceptanceCriterion:
        return AcceptanceCriterion.objects.create(plan_key="plan-001", key=f"AC-{index:03}",
                                                  description=f"criterion {index}")

    def create_payload(self) -> dict[str, Any]:
        return {"plan_key": "plan-001", "key": "AC-100", "task_key": "TASK-001", "description": "it works",
                "category": "functional"}


class TestFeatureResource(APIResourceTests):
    model = Feature
    basename = "feature"
    list_queries = LIST_QUERIES
    update_payload = {"name": "Login v2", "steps": [{"step": "open page", "passes": True}]}

    def make_instance(self, index: int) -> Feature:
        return Feature.objects.create(key=f"FEAT-{index:03}", name=f"feature {index}", plan_key="plan-001")

    def create_payload(self) -> dict[str, Any]:
        return {"key": "FEAT-100", "name": "Login", "plan_key": "plan-001",
                "steps": [{"step": "click login", "passes": False}]}


class TestContextBudgetResource(APIResourceTests):
    model = ContextBudget
    basename = "contextbudget"
    list_queries = LIST_QUERIES
    update_payload = {"current_usage": 1000, "last_action": "warned"}

    def make_instance(self, index: int) -> ContextBudget:
        return ContextBudget.objects.create(session=devteam_session(), model=f"model-{index}",
                                            context_limit=200_000)

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "model": "opus", "context_limit": 200_000,
                "warn_threshold": 150_000, "summarize_threshold": 180_000}


class TestContextSnapshotResource(APIResourceTests):
    model = ContextSnapshot
    basename = "contextsnapshot"
    list_queries = LIST_QUERIES
    update_payload = {"summary_text": "kept the plan", "trigger_reason": "phase_change"}

    def make_instance(self, index: int) -> ContextSnapshot:
        return ContextSnapshot.objects.create(session=devteam_session(), snapshot_type="auto",
                                              tokens_before=1000 + index)

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "snapshot_type": "overflow_prevention",
                "tokens_before": 190_000, "tokens_after": 40_000, "trigger_reason": "approaching_limit"}


class TestInterviewResource(APIResourceTests):
    model = Interview
    basename = "interview"
    list_queries = LIST_QUERIES
    update_payload = {"status": "skipped"}

    def make_instance(self, index: int) -> Interview:
        return devteam_interview()

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "interview_type": "bug"}


class TestInterviewQuestionResource(APIResourceTests):
    model = InterviewQuestion
    basename = "interviewquestion"
    list_queries = LIST_QUERIES
    update_payload = {"question_text": "What did you expect?", "required": False}

    def make_instance(self, index: int) -> InterviewQuestion:
        return InterviewQuestion.objects.create(interview=devteam_interview(), question_key="expected_behavior",
                                                question_text=f"question {index}", sequence=1)

    def create_payload(self) -> dict[str, Any]:
        return {"interview": devteam_interview().pk, "question_key": "repro_steps",
                "question_text": "How do we reproduce it?"}


class TestLoopRunResource(APIResourceTests):
    model = LoopRun
    basename = "looprun"
    list_queries = LIST_QUERIES
    update_payload = {"max_iterations": 20, "snapshot_path": ".ralph-mem/snapshots/run-1"}

    def make_instance(self, index: int) -> LoopRun:
        return LoopRun.objects.create(session=devteam_session(), task=f"task {index}", criteria=["tests pass"])

    def create_payload(self) -> dict[str, Any]:
        return {"session": devteam_session().pk, "task": "make the tests pass", "criteria": ["pytest exits 0"]}

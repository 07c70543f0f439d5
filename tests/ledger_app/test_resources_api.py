"""The generic resource tests for every ledger resource besides events (tests/api_mixins.py)."""

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from ledger_app.models import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    ErrorLog,
    GateResult,
    Issue,
    ModelPrice,
    Rollback,
    TokenUsage,
)
from tests.api_mixins import APIResourceTests
from tests.ledger_app.factories import make_session

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

PAGE = 3  # auth, COUNT, page
CURSOR_PAGE = 2  # auth, keyset page


class TestIssueResource(APIResourceTests):
    model, basename, list_queries = Issue, "issue", PAGE
    update_payload = {"message": "changed"}

    def make_instance(self, index: int) -> Issue:
        return Issue.objects.create(session=make_session(), task_key="t", kind="lint", signature=f"sig-{index}",
                                    message="m")

    def create_payload(self) -> dict[str, Any]:
        return {"session": make_session().id, "task_key": "t", "kind": "lint", "signature": "s", "message": "m"}


class TestCheckpointResource(APIResourceTests):
    model, basename, list_queries = Checkpoint, "checkpoint", PAGE
    update_payload = {"can_restore": False}

    def make_instance(self, index: int) -> Checkpoint:
        return Checkpoint.objects.create(key=f"chkpt-{index}", session=make_session(), path=f"p/{index}")

    def create_payload(self) -> dict[str, Any]:
        return {"key": "chkpt-20250201-120000-abc123", "session": make_session().id, "task_key": "auth-002",
                "git_ref": "HEAD~1", "path": ".devteam/checkpoints/chkpt-x"}


class TestCheckpointRestoreResource(APIResourceTests):
    model, basename, list_queries = CheckpointRestore, "checkpointrestore", PAGE
    updatable = deletable = False

    def make_instance(self, index: int) -> CheckpointRestore:
        return CheckpointRestore.objects.create(checkpoint=Checkpoint.objects.create(key=f"chkpt-r{index}",
                                                                                     session=make_session()))

    def create_payload(self) -> dict[str, Any]:
        return {"checkpoint": Checkpoint.objects.create(key="chkpt-new", session=make_session()).id,
                "agent": "orchestrator"}


class TestRollbackResource(APIResourceTests):
    model, basename, list_queries = Rollback, "rollback", PAGE
    update_payload = {"reason": "tests regressed"}

    def make_instance(self, index: int) -> Rollback:
        return Rollback.objects.create(rollback_type="auto", target_commit=f"abc{index}", session=make_session())

    def create_payload(self) -> dict[str, Any]:
        return {"rollback_type": "smart", "target_commit": "deadbeef", "trigger_type": "regression",
                "check_type": "test", "session": make_session().id}


class TestBaselineResource(APIResourceTests):
    model, basename, list_queries = Baseline, "baseline", PAGE
    update_payload = {"description": "green"}

    def make_instance(self, index: int) -> Baseline:
        return Baseline.objects.create(tag_name=f"baseline/sprint-01/{index}", commit_hash="abc", milestone="m")

    def create_payload(self) -> dict[str, Any]:
        return {"tag_name": "baseline/sprint-01/20250201-120000", "commit_hash": "abc123",
                "milestone": "sprint-start"}


class TestGateResultResource(APIResourceTests):
    model, basename, list_queries = GateResult, "gateresult", PAGE
    update_payload = {"passed": False}

    def make_instance(self, index: int) -> GateResult:
        return GateResult.objects.create(session=make_session(), gate="tests", iteration=index, passed=True)

    def create_payload(self) -> dict[str, Any]:
        return {"session": make_session().id, "gate": "lint", "iteration": 1, "passed": True, "error_count": 0}


class TestTokenUsageResource(APIResourceTests):
    model, basename, list_queries = TokenUsage, "tokenusage", CURSOR_PAGE
    updatable = deletable = False

    def make_instance(self, index: int) -> TokenUsage:
        return TokenUsage.objects.create(model="claude-sonnet", input_tokens=index, cost_usd=Decimal("0.01"))

    def create_payload(self) -> dict[str, Any]:
        return {"session": make_session().id, "model": "claude-sonnet", "input_tokens": 10, "output_tokens": 5,
                "cost_usd": "0.001000"}


class TestModelPriceResource(APIResourceTests):
    model, basename, list_queries = ModelPrice, "modelprice", PAGE
    update_payload = {"input_per_mtok": "4.000000"}

    def make_instance(self, index: int) -> ModelPrice:
        return ModelPrice.objects.create(model=f"m{index}", valid_from=timezone.now(), input_per_mtok=3)

    def create_payload(self) -> dict[str, Any]:
        return {"model": "claude-sonnet", "valid_from": "2025-01-01T00:00:00Z", "input_per_mtok": "3.000000",
                "output_per_mtok": "15.000000"}


class TestErrorLogResource(APIResourceTests):
    model, basename, list_queries = ErrorLog, "errorlog", CURSOR_PAGE
    update_payload = {"recovery_success": True}

    def make_instance(self, index: int) -> ErrorLog:
        return ErrorLog.objects.create(error_type="transient", error_message=f"timeout {index}",
                                       session=make_session())

    def create_payload(self) -> dict[str, Any]:
        return {"session": make_session().id, "error_type": "permanent", "error_message": "boom",
                "circuit_opened": True}


class TestDeadLetterResource(APIResourceTests):
    model, basename, list_queries = DeadLetter, "deadletter", PAGE
    update_payload = {"status": "failed"}

    def make_instance(self, index: int) -> DeadLetter:
        return DeadLetter.objects.create(operation_type=f"op{index}", session=make_session())

    def create_payload(self) -> dict[str, Any]:
        return {"operation_type": "git_push", "operation_params": {"branch": "main"}, "session": make_session().id,
                "retry_after": (timezone.now() + timedelta(minutes=5)).isoformat()}

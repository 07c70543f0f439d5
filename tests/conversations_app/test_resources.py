"""The generic resource tests (list/get/create/update/delete/auth/query counts) for every resource."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from conversations_app import services
from conversations_app.models import Chat, GlobalPattern, Message, Observation, Run
from sessions_app.models import Session
from tests.api_mixins import APIResourceTests, assert_error_shape

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]


def _session() -> Session:
    return Session.objects.get_or_create(key="resource-session")[0]


def _chat(index: int = 0) -> Chat:
    return services.chat_create(data={"title": f"chat {index}", "tags": ["t", f"t{index}"], "session": _session()})


class TestChatResource(APIResourceTests):
    model = Chat
    basename = "chat"
    list_queries = 3  # token auth, count, page
    update_payload = {"title": "renamed", "tags": ["x", "y"]}

    def make_instance(self, index: int) -> Chat:
        return _chat(index)

    def create_payload(self) -> dict[str, Any]:
        return {"title": "new chat", "tags": ["bench"], "worktree_id": "wt-1", "session": _session().pk}

    def test_it_deletes(self, api: APIClient) -> None:
        """Chats are soft-deleted: the row stays as a tombstone, hidden from the API."""
        chat = self.make_instance(0)
        assert api.delete(self.detail_url(chat)).status_code == 204
        chat.refresh_from_db()
        assert chat.is_deleted and chat.deleted_at is not None
        assert_error_shape(api.get(self.detail_url(chat)), 404, "ACODE-CONV-DATA-001")


class TestRunResource(APIResourceTests):
    model = Run
    basename = "run"
    list_queries = 3
    update_payload = {"status": "completed", "tokens_used": 1234}
    deletable = False

    def make_instance(self, index: int) -> Run:
        return services.run_create(data={"chat_id": _chat(index).pk})

    def create_payload(self) -> dict[str, Any]:
        return {"chat": _chat().pk}


class TestMessageResource(APIResourceTests):
    model = Message
    basename = "message"
    list_queries = 2  # token auth, page (cursor pagination: no count)
    update_payload = {"content": "edited", "sync_status": "conflict"}
    deletable = False

    def make_instance(self, index: int) -> Message:
        run = Run.objects.first() or services.run_create(data={"chat_id": _chat().pk})
        return services.message_append(run_id=run.pk, items=[{"role": "user", "content": f"m{index}"}])[0]

    def create_payload(self) -> dict[str, Any]:
        return {"run": services.run_create(data={"chat_id": _chat().pk}).pk, "role": "assistant",
                "content": "hello"}


class TestObservationResource(APIResourceTests):
    model = Observation
    basename = "observation"
    list_queries = 3
    update_payload = {"importance": 0.9, "content_compressed": "short"}

    def make_instance(self, index: int) -> Observation:
        return Observation.objects.create(session=_session(), type="bash", tool_name="Bash",
                                          content=f"ran pytest {index}")

    def create_payload(self) -> dict[str, Any]:
        return {"session": _session().pk, "type": "tool_use", "tool_name": "Edit", "content": "edited a file",
                "embedding": "AAEC", "importance": 0.7}


class TestPatternResource(APIResourceTests):
    model = GlobalPattern
    basename = "pattern"
    list_queries = 3
    update_payload: dict[str, Any] = {}
    updatable = False  # frequency and projects change only through `record`
    deletable = False

    def make_instance(self, index: int) -> GlobalPattern:
        return services.pattern_record(pattern_type="best_practice", description=f"pattern {index}",
                                       project="p")[0]

    def create_payload(self) -> dict[str, Any]:
        return {"pattern_type": "error_fix", "description": "retry on lock", "project": "ralph"}

    def list_url(self) -> str:
        return reverse("pattern-list")

    def test_it_creates(self, api: APIClient) -> None:
        response = api.post(reverse("pattern-record"), self.create_payload(), format="json")
        assert response.status_code == 201, response.content
        assert GlobalPattern.objects.filter(pk=response.json()["id"]).exists()

    def test_it_refuses_writes_to_the_collection(self, api: APIClient) -> None:
        assert_error_shape(api.post(self.list_url(), self.create_payload(), format="json"), 405,
                           "method_not_allowed")

"""The compiled read path gives exactly the dict DRF's generic `to_representation` gives.

The plans are the fast path `serializers` (`ralphsite.core.db.fast_paths`), asked at run time: these
tests turn it on (`fast_path_on`), and one turns it off to see DRF's own path taken."""

from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework import serializers

from conversations_app.api.serializers import ChatSerializer, MessageSerializer, RunSerializer
from conversations_app.models import Chat, Message, Run
from ledger_app.api.serializers import LedgerEventSerializer
from ledger_app.models import LedgerEvent
from ralphsite.core.api.representation import _context_free, represent_row
from ralphsite.core.api.serializers import RalphModelSerializer
from sessions_app.api.serializers import SessionSerializer, TaskSerializer
from sessions_app.models import Session, Task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_path_on(settings) -> None:
    settings.RALPH_FAST_PATHS, settings.RALPH_FAST_PATHS_OFF = True, frozenset()


def _generic(serializer: RalphModelSerializer, instance) -> dict:
    return serializers.Serializer.to_representation(serializer, instance)


def _rows() -> list[tuple[type[RalphModelSerializer], object]]:
    session = Session.objects.create(user_request="build it", project_path="/repo", total_cost_usd=Decimal("1.5"))
    chat = Chat.objects.create(title="Refactor", tags=["a", "b"], worktree_id="wt-1", session=session)
    run = Run.objects.create(chat=chat, sequence_number=1, completed_at=timezone.now())
    message = Message.objects.create(
        run=run, role="tool", content="ran it", sequence_number=1,
        tool_calls=[{"id": "c1", "name": "bash", "arguments": {"cmd": "ls"}, "result": None, "status": "completed"}],
    )
    task = Task.objects.create(session=session, key="task-1", title="first", wave=2)
    event = LedgerEvent.objects.create(session=session, type="x-test", tokens_in=3, cost_usd=Decimal("0.000123"),
                                       data={"nested": [1, None]})
    return [(SessionSerializer, session), (ChatSerializer, chat), (RunSerializer, run),
            (MessageSerializer, message), (TaskSerializer, task), (LedgerEventSerializer, event)]


def test_it_matches_drf_for_every_field_type() -> None:
    for serializer_class, instance in _rows():
        instance.refresh_from_db()  # values as the database returns them, not as they were assigned
        serializer = serializer_class(instance)
        fast = serializer.data
        assert fast == _generic(serializer_class(instance), instance), serializer_class.__name__
        assert list(fast) == list(_generic(serializer_class(instance), instance))


def test_it_matches_drf_for_unsaved_values_and_nulls() -> None:
    chat = Chat(title="t", tags=[], worktree_id=None, session=None, deleted_at=None)
    assert ChatSerializer(chat).data == _generic(ChatSerializer(chat), chat)


def test_it_reads_plain_columns_directly_and_keeps_drf_for_the_rest() -> None:
    chat = Chat.objects.create(title="t")
    serializer = ChatSerializer(chat)
    serializer.data  # noqa: B018 - builds the plan
    plan = {name: attname for name, attname, _ in serializer._representation_plan}
    assert plan["title"] == "title"
    assert plan["session"] == "session_id"  # the related key's column: no query
    assert plan["created_at"] == "created_at"
    assert plan["tags"] == "tags"  # a JSON column the ListField itself converts


class _RunWithChatTitle(RunSerializer):
    chat_title = serializers.CharField(source="chat.title", read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "chat_title"]


def test_it_keeps_drf_for_a_source_that_is_not_a_column() -> None:
    run = Run.objects.create(chat=Chat.objects.create(title="the chat"), sequence_number=1)
    serializer = _RunWithChatTitle(run)
    assert serializer.data["chat_title"] == "the chat"
    assert serializer.data == _generic(_RunWithChatTitle(run), run)
    assert _RunWithChatTitle(many=True).child.row_plan() is None  # a list of these builds instances
    plan = {name: attname for name, attname, _ in serializer._representation_plan}
    assert plan["chat_title"] is None


def test_it_shapes_values_rows_as_it_shapes_instances() -> None:
    for serializer_class, instance in _rows():
        plan = serializer_class(many=True).child.row_plan()
        if plan is None:
            continue
        row = type(instance).objects.filter(pk=instance.pk).values(*{attname for _, attname, _ in plan}).get()
        instance.refresh_from_db()
        assert represent_row(plan, row) == _generic(serializer_class(instance), instance), serializer_class.__name__
    assert MessageSerializer(many=True).child.row_plan() is not None  # tool calls, parent id: all columns


def test_it_runs_no_query_for_a_related_key(django_assert_num_queries) -> None:
    chat = Chat.objects.create(title="t", session=Session.objects.create(user_request="x"))
    chat = Chat.objects.get(pk=chat.pk)
    with django_assert_num_queries(0):
        assert ChatSerializer(chat).data["session"] == chat.session_id


def test_it_shapes_nested_and_list_columns_without_binding_the_serializers_fields() -> None:
    chat = Chat.objects.create(title="t", tags=["x"])
    run = Run.objects.create(chat=chat, sequence_number=1)
    message = Message.objects.create(run=run, role="tool", content="c", sequence_number=1, tool_calls=[
        {"id": "c1", "name": "bash", "arguments": {}, "status": "completed"}])  # no "result": DRF skips it
    for serializer_class, instance in ((ChatSerializer, chat), (MessageSerializer, message)):
        serializer = serializer_class(instance)
        assert serializer.data == _generic(serializer_class(instance), instance)
        assert "fields" not in serializer.__dict__, serializer_class.__name__


def test_it_lists_model_instances_through_drf_with_the_fast_paths_off(settings) -> None:
    assert MessageSerializer(many=True).child.row_plan() is not None
    settings.RALPH_FAST_PATHS_OFF = frozenset({"serializers"})
    assert MessageSerializer(many=True).child.row_plan() is None
    chat = Chat.objects.create(title="t")
    serializer = ChatSerializer(chat)
    assert serializer.data == _generic(ChatSerializer(chat), chat)
    assert "_representation_plan" not in serializer.__dict__  # DRF's own representation


def test_it_leaves_fields_that_read_the_context_to_the_bound_serializer() -> None:
    assert not _context_free(serializers.FileField())
    assert not _context_free(serializers.ListField(child=serializers.ImageField()))
    assert _context_free(serializers.ListField(child=serializers.CharField()))
    assert _context_free(MessageSerializer().fields["tool_calls"])

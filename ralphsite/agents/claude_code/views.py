"""`/api/v1/claude-code/`: Claude Code's hooks (`ralph hook <event>` posts each) and its Ralph loops."""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from conversations_app.models import Message, Observation
from ledger_app.models import TokenUsage
from ralphsite.agents.claude_code.hooks import claude_code_hook_record, loop_state
from ralphsite.agents.claude_code.loops import claude_code_loop_start
from ralphsite.core.access import current_scope
from ralphsite.core.api.fields import StorableJSONField
from ralphsite.core.api.schema import ErrorSerializer
from ralphsite.core.api.serializers import RalphInputSerializer, validated
from ralphsite.core.api.viewsets import RalphViewSet
from sessions_app.models import LoopRun, Session

MAX_TRANSCRIPT_ENTRIES = 5000
_ERRORS = {400: ErrorSerializer, 403: ErrorSerializer, 409: ErrorSerializer}


class TranscriptSliceSerializer(RalphInputSerializer):
    offset = serializers.IntegerField(min_value=0, help_text="Byte offset of the first entry in the transcript file.")
    next_offset = serializers.IntegerField(min_value=0, help_text="Byte offset just after the last entry.")
    entries = serializers.ListField(child=StorableJSONField(), max_length=MAX_TRANSCRIPT_ENTRIES, default=list,
                                    help_text="The transcript's JSONL lines in that range, each parsed.")
    subagent = serializers.BooleanField(default=False, help_text="A subagent's own transcript (SubagentStop's "
                                        "`agent_transcript_path`): its usage is recorded, its messages are not.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["next_offset"] < attrs["offset"]:
            raise serializers.ValidationError({"next_offset": ["Not before offset."]})
        return attrs


@extend_schema_field({"type": "object", "additionalProperties": True})
class JSONObjectField(StorableJSONField):
    """A JSON object (a hook's input)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("A JSON object.")
        return value


class HookInputSerializer(RalphInputSerializer):
    event = serializers.RegexField(r"^[A-Za-z]{1,64}$", max_length=64,
                                   help_text="The hook event name (SessionStart, Stop, PostToolUse, …).")
    payload = JSONObjectField(help_text="The hook's standard input as Claude Code sent it.")
    transcript = TranscriptSliceSerializer(required=False)


class LoopStateSerializer(serializers.Serializer):
    id = serializers.CharField()
    state = serializers.CharField(help_text="running, paused, completed or stopped.")
    iteration = serializers.IntegerField(help_text="Turns the loop has completed.")
    max_iterations = serializers.IntegerField(allow_null=True)
    wait_seconds = serializers.IntegerField(allow_null=True, help_text="Paused: ask again after this many seconds.")


class HookAnswerSerializer(serializers.Serializer):
    output = serializers.JSONField(help_text="What the hook prints on standard output for Claude Code ({}: nothing).")
    session = serializers.CharField(help_text="The Ralph Site session's id.")
    loop = LoopStateSerializer(allow_null=True)


class LoopStartSerializer(RalphInputSerializer):
    project_path = serializers.RegexField(r"^/", max_length=1000,
                                          help_text="The project's absolute path (Claude Code's cwd).")
    prompt = serializers.CharField(max_length=100_000, help_text="Fed back to Claude Code at the end of each turn.")
    max_iterations = serializers.IntegerField(min_value=1, max_value=1_000_000, allow_null=True, required=False,
                                              default=None, help_text="Turns at most; null: no limit.")
    completion_promise = serializers.CharField(max_length=1000, allow_null=True, allow_blank=True, required=False,
                                               default=None, help_text="<promise>TEXT</promise> completes the loop.")
    claude_session_id = serializers.CharField(max_length=100, allow_null=True, allow_blank=True, required=False,
                                              default=None, help_text="The Claude Code session; null: the next one.")
    pause_timeout_seconds = serializers.IntegerField(min_value=1, max_value=7 * 24 * 3600, allow_null=True,
                                                     required=False, default=None,
                                                     help_text="An operator's Pause holds at most this long.")


class LoopStartedSerializer(LoopStateSerializer):
    session = serializers.CharField()
    claude_session_id = serializers.CharField(allow_null=True)
    prompt = serializers.CharField()
    completion_promise = serializers.CharField(allow_null=True)


class ClaudeCodeViewSet(RalphViewSet):
    """Claude Code's hooks and Ralph loops."""

    permission_models = (Session, LoopRun, Message, Observation, TokenUsage)

    @extend_schema(request=HookInputSerializer, responses={200: HookAnswerSerializer, **_ERRORS},
                   summary="Record a Claude Code hook",
                   description="Records one hook of a Claude Code session (its `session_id` is the Ralph Site "
                               "session's key; the project is the token's, or `cwd` for a global token) with the "
                               "transcript entries since the last call: messages, tool calls and their results, each "
                               "API call's usage (once per message id, priced), each tool use as an observation. "
                               "Answers what the hook prints: SessionStart's context, Stop's loop decision (`block` "
                               "with the next prompt, or nothing to let it stop; `loop.state` `paused` with "
                               "`wait_seconds`: ask again). The same request twice records nothing twice.")
    @action(detail=False, methods=["post"], url_path="hooks")
    def hooks(self, request: Request) -> Response:
        data = validated(HookInputSerializer, request)
        answer = claude_code_hook_record(scope=current_scope(), event=data["event"], payload=data["payload"],
                                         transcript=data.get("transcript") or {})
        return Response({"output": answer.output, "session": answer.session.pk, "loop": answer.loop})

    @extend_schema(request=LoopStartSerializer, responses={201: LoopStartedSerializer, **_ERRORS},
                   summary="Start a Ralph loop in Claude Code",
                   description="Starts a loop in the project's Claude Code session (`claude_session_id`; when null, "
                               "the project's next Claude Code session takes it at its first hook). At each Stop the "
                               "loop feeds `prompt` back, or the operator's Steer message once, until the completion "
                               "promise, `max_iterations` or the operator's Stop; a Pause holds it.")
    @action(detail=False, methods=["post"], url_path="loops")
    def loops(self, request: Request) -> Response:
        data = validated(LoopStartSerializer, request)
        loop_run = claude_code_loop_start(
            scope=current_scope(), project_path=data["project_path"], prompt=data["prompt"],
            max_iterations=data["max_iterations"], completion_promise=data["completion_promise"] or "",
            claude_session_id=data["claude_session_id"] or None, pause_timeout_seconds=data["pause_timeout_seconds"])
        session = loop_run.session
        return Response({**loop_state(loop_run), "session": session.pk, "claude_session_id": session.key or None,
                         "prompt": loop_run.task, "completion_promise": loop_run.completion_promise or None},
                        status=status.HTTP_201_CREATED)

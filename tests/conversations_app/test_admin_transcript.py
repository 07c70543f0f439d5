"""The conversation viewer: a chat read run by run, messages by role with their times, tool calls folded."""

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from conversations_app import services
from conversations_app.admin import TRANSCRIPT_PAGE_SIZE, tool_call_views
from conversations_app.models import Chat, Run
from ledger_app.models import TokenUsage

pytestmark = pytest.mark.django_db


def transcript_url(chat: Chat) -> str:
    return reverse("admin:conversations_app_chat_transcript", args=[chat.pk])


@pytest.fixture
def two_runs(make_chat: Callable[..., Chat], make_run: Callable[..., Run]) -> tuple[Chat, Run, Run]:
    chat = make_chat(title="릴리스 노트 · release notes")
    first, second = make_run(chat), make_run(chat)
    services.message_append(run_id=first.pk, items=[{"role": "user", "content": "the first run's question"}])
    services.message_append(run_id=second.pk, items=[
        {"role": "user", "content": "Please <script>alert(1)</script> fix the parser"},
        {"role": "assistant", "content": "변경 사항을 확인했습니다 ✅",
         "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"cmd": "pytest -q"}, "result": "3 passed",
                         "status": "completed"}]},
    ])
    return chat, first, second


def test_it_opens_on_the_latest_run_with_messages_styled_by_role(admin_client: Client, two_runs) -> None:
    chat, _, _ = two_runs
    page = admin_client.get(transcript_url(chat))
    html = page.content.decode()
    assert page.status_code == 200
    assert "<title>릴리스 노트 · release notes" in html
    assert 'class="rt-message rt-role-user"' in html and 'class="rt-message rt-role-assistant"' in html
    assert "Please &lt;script&gt;alert(1)&lt;/script&gt; fix the parser" in html  # escaped, never run
    assert "<script>alert(1)" not in html
    assert "변경 사항을 확인했습니다 ✅" in html
    assert "the first run's question" not in html  # one run a page
    assert f'href="{transcript_url(chat)}?run=1"' in html and 'aria-current="page"' in html


def test_it_folds_tool_calls_with_name_status_arguments_and_result(admin_client: Client, two_runs) -> None:
    chat, _, _ = two_runs
    html = admin_client.get(transcript_url(chat), {"run": 2}).content.decode()
    assert '<details class="rt-tool-call">' in html
    assert "<summary><code>bash</code>" in html and "completed" in html
    assert "&quot;cmd&quot;: &quot;pytest -q&quot;" in html and "3 passed" in html


def test_it_shows_an_earlier_run_when_asked(admin_client: Client, two_runs) -> None:
    chat, _, _ = two_runs
    html = admin_client.get(transcript_url(chat), {"run": 1}).content.decode()
    assert "the first run&#x27;s question" in html and "fix the parser" not in html


def test_it_pages_a_long_run_without_reading_it_all(admin_client: Client, make_run, append) -> None:
    run = make_run()
    append(run, *[f"message number {n}" for n in range(1, TRANSCRIPT_PAGE_SIZE + 6)])
    first_page = admin_client.get(transcript_url(run.chat), {"run": 1}).content.decode()
    assert f"message number {TRANSCRIPT_PAGE_SIZE}<" in first_page
    assert f"message number {TRANSCRIPT_PAGE_SIZE + 1}<" not in first_page
    next_url = f"{transcript_url(run.chat)}?run=1&amp;after={TRANSCRIPT_PAGE_SIZE}"
    assert next_url in first_page
    with CaptureQueriesContext(connection) as queries:
        second_page = admin_client.get(next_url.replace("&amp;", "&")).content.decode()
    assert f"message number {TRANSCRIPT_PAGE_SIZE + 5}<" in second_page
    assert "message number 1<" not in second_page
    assert "Next messages" not in second_page
    # the session and user, the chat, its runs, their usage, one page of messages: never a query per message
    assert len(queries) == 6, [q["sql"] for q in queries]


@pytest.mark.parametrize("query", [{"run": "9"}, {"run": "x"}, {"after": "-1"}])
def test_it_answers_404_for_a_run_or_position_that_does_not_exist(admin_client: Client, two_runs,
                                                                     query: dict[str, str]) -> None:
    chat, _, _ = two_runs
    assert admin_client.get(transcript_url(chat), query).status_code == 404


def test_it_needs_the_permission_to_view_chats(client: Client, two_runs) -> None:
    chat, _, _ = two_runs
    staff = get_user_model().objects.create_user("viewer", password="pw-1234-abcd", is_staff=True)
    client.force_login(staff)
    assert client.get(transcript_url(chat)).status_code == 403


def test_the_run_page_is_titled_by_its_chat_and_links_its_conversation(admin_client: Client, two_runs) -> None:
    chat, _, second = two_runs
    html = admin_client.get(reverse("admin:conversations_app_run_change", args=[second.pk])).content.decode()
    assert "<h1>릴리스 노트 · release notes · run 2</h1>" in html
    assert f"{transcript_url(chat)}?run=2" in html


def test_it_reads_tool_calls_in_any_shape_an_agent_sent() -> None:
    assert tool_call_views(None) == []
    [odd] = tool_call_views("raw text")
    assert (odd.name, odd.arguments) == ("tool call", "raw text")
    [call] = tool_call_views([{"name": "grep", "arguments": "-r x", "status": "running"}])
    assert (call.name, call.arguments, call.result, call.status) == ("grep", "-r x", "", "running")


def test_the_session_console_links_each_conversation_to_its_transcript(admin_client: Client, make_chat,
                                                                        session) -> None:
    chat = make_chat(title="planning chat", session_id=session.pk)
    html = admin_client.get(reverse("admin:sessions_app_session_change", args=[session.pk])).content.decode()
    assert f'<a href="{transcript_url(chat)}">planning chat</a>' in html


def test_each_run_shows_its_tokens_and_cost_from_the_calls_booked_against_it_or_its_own_count(
        admin_client: Client, api, two_runs, session) -> None:
    """Issue #31 §7: a run whose calls are booked in token usage (Claude Code's hooks book them against their
    run) shows their sums, in and out and dollars; a run with none its own tokens_used. Never both: the
    booked run's own count (999) is not added."""
    chat, first, second = two_runs
    Run.objects.filter(pk__in=[first.pk, second.pk]).update(tokens_used=999)
    Run.objects.filter(pk=first.pk).update(tokens_used=40)
    for request_id, tokens_in, tokens_out, cost in (("r1", 1200, 300, "0.012500"), ("r2", 800, 34, "0.000500")):
        TokenUsage.objects.create(session=session, request_id=request_id, model="claude-sonnet-4-5",
                                  input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, source="run",
                                  source_id=second.pk)
    with CaptureQueriesContext(connection) as captured:
        html = admin_client.get(transcript_url(chat)).content.decode()
    assert "2,000 in · 334 out · $0.013000" in html and "40 tokens" in html and "999 tokens" not in html
    assert "2,000 tokens in, 334 out, $0.013000 over 2 calls" in html
    assert sum("ledger_app_tokenusage" in query["sql"] for query in captured) == 1  # one query for every run
    assert api.get(f"/api/v1/runs/{second.pk}/").json()["usage"] == {
        "booked": True, "tokens": 2334, "input_tokens": 2000, "output_tokens": 334, "cost_usd": "0.013000",
        "calls": 2}
    assert api.get(f"/api/v1/runs/{first.pk}/").json()["usage"] == {
        "booked": False, "tokens": 40, "input_tokens": None, "output_tokens": None, "cost_usd": None, "calls": None}
    assert {run["usage"] for run in api.get("/api/v1/runs/", {"chat": chat.pk}).json()["results"]} == {None}

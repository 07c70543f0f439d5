"""Lists for people, on tables of any size: every changelist of the registry is walked."""

import re

import pytest
from django.contrib import admin
from django.db import connection
from django.db.models import Model
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from conversations_app.models import Chat, Message, Run
from ledger_app.models import LedgerEvent, TokenUsage
from ralphsite.core.service_admin import COUNT_CAP, RalphModelAdmin, SessionFilter
from sessions_app.models import AgentInvocation, Question, Session, Signal, Task
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db
MODELS = sorted(admin.site._registry, key=lambda m: m._meta.label)
OURS = ("sessions_app", "conversations_app", "ledger_app", "ralphsite")


def changelist(model: type) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


@pytest.mark.parametrize("model", MODELS, ids=[m._meta.label for m in MODELS])
def test_every_list_derives_from_the_base_and_never_counts_a_whole_table(admin_client: Client, model: type) -> None:
    if model._meta.app_label not in OURS:  # Django's users and groups, DRF's tokens: small tables of their own
        return
    assert isinstance(admin.site._registry[model], RalphModelAdmin)
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(changelist(model)).status_code == 200
    counts = [q["sql"] for q in queries if q["sql"].upper().startswith("SELECT COUNT(")]
    # The only count is the capped one: SELECT COUNT(*) FROM (SELECT … LIMIT 10001).
    assert all(f"LIMIT {COUNT_CAP + 1}" in sql for sql in counts), counts
    assert not [q["sql"] for q in queries if "DISTINCT" in q["sql"].upper() and "django_datetime_trunc" in q["sql"]]


@pytest.mark.parametrize("model", [Task, Question, Signal, AgentInvocation, Message, LedgerEvent, TokenUsage])
def test_the_people_lists_filter_by_session_with_an_autocomplete(admin_client: Client, model: type) -> None:
    specs = admin.site._registry[model].get_list_filter(None)
    assert any(isinstance(spec, type) and issubclass(spec, SessionFilter) for spec in specs)
    html = admin_client.get(changelist(model)).content.decode()
    assert 'class="admin-autocomplete rl-session-filter-select"' in html
    assert "ralphsite/session_filter.js" in html and "admin/js/vendor/select2/select2.full" in html


def test_ids_go_last(admin_client: Client) -> None:
    for model in (model for model in MODELS if model._meta.app_label in OURS):
        columns = admin.site._registry[model].get_list_display(None)
        assert "id" not in columns[:-1], model


def populate(sessions: int, *, start: int = 0) -> Session:
    first = None
    for n in range(start, start + sessions):
        session = make_session(key=f"s-{n}")
        first = first or session
        task = make_task(session, f"task-{n}", status="failed", status_annotation="tests red")
        Question.objects.create(session=session, key=f"Q-{n}", category="technical", text="why?")
        Signal.objects.create(session=session, type="pause")
        AgentInvocation.objects.create(session=session, agent="executor", task=task)
        LedgerEvent.objects.create(session=session, type="x-probe", message="hello")
        TokenUsage.objects.create(session=session, model="opus", input_tokens=3)
        run = Run.objects.create(chat=Chat.objects.create(title=f"chat {n}", session=session), sequence_number=1)
        Message.objects.create(run=run, role="user", content="안녕하세요", sequence_number=1)
    return first


@pytest.mark.parametrize("model", [Session, Task, Question, Signal, AgentInvocation, Message, LedgerEvent,
                                   TokenUsage, Run, Chat])
def test_a_list_costs_the_same_queries_for_two_rows_or_twenty(admin_client: Client, model: type) -> None:
    def queries_of_the_page() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(changelist(model)).status_code == 200
        return len(queries)

    populate(2)
    few = queries_of_the_page()
    populate(18, start=2)
    assert queries_of_the_page() == few


def test_the_session_filter_narrows_each_list_to_the_session(admin_client: Client) -> None:
    wanted = populate(3)
    for model in (Task, Question, Signal, AgentInvocation, Message, LedgerEvent, TokenUsage):
        page = admin_client.get(changelist(model), {"session": wanted.pk})
        rows = page.context["cl"].result_list
        assert len(rows) == 1, model
        assert f'<option value="{wanted.pk}" selected>s-0</option>' in page.content.decode()


def test_what_a_person_scans_comes_first(admin_client: Client) -> None:
    populate(1)
    html = admin_client.get(changelist(Task)).content.decode()
    columns = re.findall(r'<th scope="col" class="(?:sortable )?column-(\w+)', html)
    assert columns[:4] == ["key", "title_short", "status_badge", "status_annotation_short"] and columns[-1] == "id"
    assert '<span class="rl-badge rl-v-failed">Failed</span>' in html and "tests red" in html
    html = admin_client.get(changelist(Message)).content.decode()
    assert "안녕하세요" in html


def test_a_badge_column_is_headed_by_its_field(admin_client: Client) -> None:
    populate(1)
    assert column_headers(admin_client, Session)[:2] == [("status_badge", "Status"), ("state_badge", "State")]
    assert ("role_badge", "Role") in column_headers(admin_client, Message)


def column_headers(client: Client, model: type[Model]) -> list[tuple[str, str]]:
    """(column, header text) of each badge column of the model's list. The header's text is read
    inside its own <th> (Django 6.1 gave the sort link a role attribute)."""
    html = client.get(changelist(model)).content.decode()
    cells = re.findall(r'<th scope="col" class="[^"]*column-(\w+_badge)[^"]*">(.*?)</th>', html, re.S)
    return [(column, re.sub(r"<[^>]+>", "", cell).strip()) for column, cell in cells]


def test_a_capped_count_says_more_than(admin_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ralphsite.core.service_admin.COUNT_CAP", 3)
    session = make_session()
    LedgerEvent.objects.bulk_create(LedgerEvent(session=session, type="x-probe") for _ in range(5))
    html = admin_client.get(changelist(LedgerEvent)).content.decode()
    assert "more than 3 ledger events" in html

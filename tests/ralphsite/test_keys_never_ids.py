"""A key shaped like a ULID is refused by the database as the services refuse it (issue #28 §4): a CHECK on every
keyed model's key (`ralphsite.core.db.lookups.key_not_shaped_like_id`), written as SQL any connection to the
file runs (SQLite's GLOB, PostgreSQL's `~`), so raw SQL and other tools cannot store what the services refuse."""

import json
import logging
import sqlite3
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Q

from ledger_app.models import Checkpoint
from ralphsite.core.addressing import as_ulid, key_in_paths_of
from ralphsite.core.models import TokenPermission, TokenScope
from ralphsite.core.ulid import ulid_new
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Plan, Question, Session, Task

ID = "01BX5ZZKBKACTAV9WEVGEMMVRZ"
# Spelled like a ULID by `ulid_normalize`: 26 Crockford base32 characters, either case, the first at most 7.
SHAPED = [ID, ID.lower(), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "00000000000000000000000000", "0" + "z" * 25,
          "01bx5ZZKBKACTAV9WEVGEMMVRZ"]
# Not: one too few or many, a first character past 7, letters Crockford leaves out, non-ASCII, whitespace.
NOT_SHAPED = [ID[:-1], ID + "0", "8" + ID[1:], ID[:-1] + "U", ID[:-1] + "I", ID[:-1] + "L", ID[:-1] + "O",
              ID[:-1] + "é", ID[:-1] + "\n", " " + ID[1:], ID[:-1] + "_", ID[:-1] + "*", ID[:-1] + "?", "", "run-42"]


def _keyed_models() -> list[type[models.Model]]:
    return [model for model in apps.get_models() if key_in_paths_of(model)]


def test_the_database_reads_a_ulid_shape_exactly_as_the_services_do(db: None) -> None:
    for value in SHAPED + NOT_SHAPED:
        assert (as_ulid(value) is not None) is (value in SHAPED), value
        assert Q(key__ulid_shaped=True).check({"key": value}) is (value in SHAPED), value
        assert Q(key__ulid_shaped=False).check({"key": value}) is (value not in SHAPED), value


def test_every_keyed_model_and_no_other_has_the_constraint() -> None:
    """One list: the models the services refuse a ULID-shaped key for (`key_in_paths_of`: an address key, or a key
    naming rows within their session in paths) are the ones the database refuses it for."""
    checked = {model for model in apps.get_models() for constraint in model._meta.constraints
               if isinstance(constraint, models.CheckConstraint) and "ulid_shaped" in str(constraint.condition)}
    assert checked == set(_keyed_models()) == {Session, Plan, Checkpoint, Task, Question}
    for model in checked:
        assert f"{key_in_paths_of(model)}__ulid_shaped" in str(model._meta.constraints), model


def _rows() -> dict[type[models.Model], models.Model]:
    session = Session.objects.create(key="run-1", project_path="/srv/widgets")
    rows = {Session: session, Plan: Plan.objects.create(key="plan-1", name="p", session=session),
            Checkpoint: Checkpoint.objects.create(key="chk-1", session=session),
            Task: Task.objects.create(key="task-1", title="t", session=session),
            Question: Question.objects.create(key="Q-1", text="q?", category="technical", session=session)}
    assert set(rows) == set(_keyed_models())  # a keyed model added later needs a row here
    return rows


def _copy_sql(model: type[models.Model], key: str) -> tuple[str, list[Any]]:
    """A raw INSERT of a copy of the model's one row, with a new id and `key`."""
    table, quote = model._meta.db_table, connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {quote(table)}")
        columns = [column[0] for column in cursor.description]
        row = {column: json.dumps(value) if isinstance(value, dict | list) else value  # PostgreSQL's JSON
               for column, value in zip(columns, cursor.fetchone(), strict=True)}
    row.update(id=ulid_new(), key=key)
    return (f"INSERT INTO {quote(table)} ({', '.join(map(quote, columns))}) VALUES ({', '.join(['%s'] * len(row))})",
            list(row.values()))


def test_a_raw_insert_of_a_key_shaped_like_a_ulid_is_refused_for_every_keyed_model(db: None) -> None:
    for model in _rows():
        for key in (ID, ID.lower()):
            sql, params = _copy_sql(model, key)
            with pytest.raises(IntegrityError, match="key_not_ulid"), transaction.atomic(), connection.cursor() as c:
                c.execute(sql, params)
        sql, params = _copy_sql(model, "8" + ID[1:])  # 26 characters, but no ULID: a key like any other
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        assert model._default_manager.filter(key="8" + ID[1:]).count() == 1
        assert not model._default_manager.filter(key__iexact=ID).exists()


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite: a connection without Django's functions")
def test_a_plain_sqlite3_connection_runs_the_constraint(db: None) -> None:
    """The sqlite3 shell and other tools register no REGEXP: the tables' CHECKs need none (a CHECK calling a
    missing function would refuse every write to the table)."""
    plain = sqlite3.connect(":memory:")
    for model in _rows():
        table = model._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [table])
            ddl = cursor.fetchone()[0]
        assert "GLOB" in ddl and "REGEXP" not in ddl.upper()
        plain.execute(ddl)
        sql, params = _copy_sql(model, "8" + ID[1:])
        plain.execute(sql.replace("%s", "?"), params)
        sql, params = _copy_sql(model, ID)
        with pytest.raises(sqlite3.IntegrityError, match="key_not_ulid"):
            plain.execute(sql.replace("%s", "?"), params)
    plain.close()


def test_the_services_refusal_is_unchanged(db: None, django_user_model: Any) -> None:
    """The services answer first (400 `key_shaped_like_id`, the same words), never the database's error."""
    from rest_framework.test import APIClient

    user = django_user_model.objects.create_user("owner")
    secret = api_token_create(user=user, scope=TokenScope.PROJECT, permission=TokenPermission.WRITE,
                              project_path="/srv/widgets").secret
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    refused = client.post("/api/v1/sessions/", {"key": ID.lower(), "project_path": "/srv/widgets"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["code"] == "key_shaped_like_id"
    assert refused.json()["message"] == "A session key is never shaped like a ULID: it would read as an id."
    assert refused.json()["details"] == {"key": ["Not shaped like a ULID."]}


@pytest.mark.django_db(transaction=True)
def test_the_migration_renames_the_keys_stored_before_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """Rows an import or raw SQL stored before the constraint: renamed `key-<key>` (`-2` when the scope has that
    key already), each listed in a warning with the count; the migration never fails on them."""
    call_command("migrate", "sessions_app", "0016", verbosity=0)  # and ledger_app 0014, which depends on it
    try:
        Historical = _historical_models()
        session = Historical["session"].objects.create(id=ulid_new(), key=ID, project_path="/srv/widgets")
        Historical["session"].objects.create(id=ulid_new(), key=f"key-{ID}", project_path="/srv/widgets")
        Historical["plan"].objects.create(id=ulid_new(), key=ID.lower(), name="p", session_id=session.pk)
        Historical["checkpoint"].objects.create(id=ulid_new(), key=ID, session_id=session.pk)
        Historical["checkpoint"].objects.create(id=ulid_new(), key="chk-1", session_id=session.pk)
    finally:
        with caplog.at_level(logging.WARNING, logger="ralphsite.core.db.migration_operations"):
            call_command("migrate", verbosity=0)
    assert Session.objects.get(pk=session.pk).key == f"key-{ID}-2"
    assert list(Plan.objects.values_list("key", flat=True)) == [f"key-{ID.lower()}"]
    assert sorted(Checkpoint.objects.values_list("key", flat=True)) == ["chk-1", f"key-{ID}"]
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 3, warnings
    assert any("sessions_app.Session: 1 keys shaped like a ULID renamed" in w and f"{ID} → key-{ID}-2" in w
               for w in warnings), warnings
    assert any("ledger_app.Checkpoint: 1 keys" in w for w in warnings), warnings


def _historical_models() -> dict[str, type[models.Model]]:
    from django.db.migrations.executor import MigrationExecutor

    state = MigrationExecutor(connection).loader.project_state([("sessions_app", "0016_keys_unique_per_scope"),
                                                                 ("ledger_app", "0014_token_usage_session_key_of_a_"
                                                                                "session_not_here")])
    return {"session": state.apps.get_model("sessions_app", "session"),
            "plan": state.apps.get_model("sessions_app", "plan"),
            "checkpoint": state.apps.get_model("ledger_app", "checkpoint")}


@pytest.mark.django_db(transaction=True)
def test_the_task_and_question_migration_renames_their_keys_stored_before(caplog: pytest.LogCaptureFixture) -> None:
    """Task and question keys name rows in their session's paths (`sessions/{session}/tasks/{task}/`), where a
    ULID-shaped value is read as an id first: sessions 0020 renames such keys stored before, within the session."""
    call_command("migrate", "sessions_app", "0019", verbosity=0)
    try:
        state = _state_at([("sessions_app", "0019_money_ten_places")])
        session = state.get_model("sessions_app", "session").objects.create(id=ulid_new(), key="run-1",
                                                                           project_path="/srv/widgets")
        tasks, questions = state.get_model("sessions_app", "task"), state.get_model("sessions_app", "question")
        task = tasks.objects.create(id=ulid_new(), key=ID, title="t", session_id=session.pk)
        tasks.objects.create(id=ulid_new(), key=f"key-{ID}", title="t", session_id=session.pk)
        question = questions.objects.create(id=ulid_new(), key=ID.lower(), text="q?", session_id=session.pk)
    finally:
        with caplog.at_level(logging.WARNING, logger="ralphsite.core.db.migration_operations"):
            call_command("migrate", verbosity=0)
    assert Task.objects.get(pk=task.pk).key == f"key-{ID}-2"
    assert Question.objects.get(pk=question.pk).key == f"key-{ID.lower()}"
    warnings = [record.getMessage() for record in caplog.records]
    assert any("sessions_app.Task: 1 keys shaped like a ULID renamed" in w for w in warnings), warnings
    assert any("sessions_app.Question: 1 keys" in w for w in warnings), warnings


def _state_at(nodes: list[tuple[str, str]]) -> Any:
    from django.db.migrations.executor import MigrationExecutor

    return MigrationExecutor(connection).loader.project_state(nodes).apps

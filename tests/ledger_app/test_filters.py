"""List filters: a malformed id is a 400 naming the filter, checked without a query."""

import inspect

import django_filters
import pytest
from rest_framework.test import APIClient

from ledger_app.api import filters
from ledger_app.models import Checkpoint, CheckpointRestore, GateResult
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_event, make_session

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

SESSION_SCOPED_LISTS = ["events", "issues", "checkpoints", "rollbacks", "gate-results", "token-usage", "errors",
                        "dead-letters"]
# Not base32, too short, past the 48-bit time range, a character outside the alphabet.
MALFORMED_IDS = ["NOTAULID", "01ARZ3NDEKTSV4RRFFQ69G5FA", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FA!"]


def _foreign_key_names(model: type) -> set[str]:
    return {name for field in model._meta.get_fields() if field.many_to_one for name in (field.name, field.attname)}


def _filtersets_of_models_with_foreign_keys() -> list[type[django_filters.FilterSet]]:
    return [cls for _, cls in inspect.getmembers(filters, inspect.isclass)
            if issubclass(cls, django_filters.FilterSet) and cls._meta.model is not None
            and _foreign_key_names(cls._meta.model)]


@pytest.mark.parametrize("resource", SESSION_SCOPED_LISTS)
@pytest.mark.parametrize("value", MALFORMED_IDS)
def test_it_refuses_a_value_that_is_neither_a_session_id_nor_key_naming_the_filter(api: APIClient, resource: str,
                                                                                   value: str) -> None:
    body = assert_error_shape(api.get(f"/api/v1/{resource}/", {"session": value}), 400, "validation_error")
    assert list(body["details"]) == ["session"]
    assert "has the id or key" in body["message"]  # not a ULID: read as a session key, which names none


def test_it_refuses_a_malformed_checkpoint_id_on_restores(api: APIClient) -> None:
    body = assert_error_shape(api.get("/api/v1/checkpoint-restores/", {"checkpoint": "chkpt-1"}), 400,
                              "validation_error")
    assert list(body["details"]) == ["checkpoint"]


def test_it_filters_restores_by_a_well_formed_checkpoint_id(api: APIClient) -> None:
    checkpoint = Checkpoint.objects.create(key="chkpt-1")
    restore = CheckpointRestore.objects.create(checkpoint=checkpoint)
    CheckpointRestore.objects.create(checkpoint=Checkpoint.objects.create(key="chkpt-2"))
    response = api.get("/api/v1/checkpoint-restores/", {"checkpoint": checkpoint.id.lower()})
    assert response.status_code == 200, response.content
    assert [row["id"] for row in response.json()["results"]] == [restore.id]


def test_it_accepts_a_lower_case_session_id_and_finds_its_events(api: APIClient) -> None:
    session = make_session()
    event = make_event(session)
    make_event(make_session(), 1)
    response = api.get("/api/v1/events/", {"session": session.id.lower()})
    assert response.status_code == 200, response.content
    assert [row["id"] for row in response.json()["results"]] == [event.id]


def test_it_an_unknown_but_well_formed_session_is_an_empty_page(api: APIClient) -> None:
    response = api.get("/api/v1/events/", {"session": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})
    assert response.status_code == 200 and response.json()["results"] == []


def test_it_checks_the_session_id_without_a_query(api: APIClient, django_assert_num_queries) -> None:
    session = make_session()
    for index in range(3):
        make_event(session, index)
    with django_assert_num_queries(2):  # auth, one keyset page: no lookup of the session
        response = api.get("/api/v1/events/", {"session": session.id})
    assert len(response.json()["results"]) == 3
    with django_assert_num_queries(2):  # auth, one lookup of the value as a session key (none has it)
        assert api.get("/api/v1/events/", {"session": "NOTAULID"}).status_code == 400


@pytest.mark.parametrize("value", ["-1", "1.5", "abc", "1e30", str(2**63)])
def test_it_refuses_an_after_cursor_that_is_no_64_bit_id(api: APIClient, value: str) -> None:
    body = assert_error_shape(api.get("/api/v1/events/", {"after": value}), 400, "validation_error")
    assert list(body["details"]) == ["after"]


def test_it_tails_after_the_largest_id(api: APIClient) -> None:
    make_event(make_session())
    response = api.get("/api/v1/events/", {"after": str(2**63 - 1)})
    assert response.status_code == 200 and response.json()["results"] == []


def test_it_covers_every_ledger_filterset_with_a_foreign_key() -> None:
    assert len(_filtersets_of_models_with_foreign_keys()) == len(SESSION_SCOPED_LISTS) + 1  # + restores


@pytest.mark.parametrize("filterset", _filtersets_of_models_with_foreign_keys(), ids=lambda cls: cls.__name__)
def test_it_every_filter_on_a_foreign_key_checks_the_ulid_syntax(filterset: type[django_filters.FilterSet]) -> None:
    relations = _foreign_key_names(filterset._meta.model)
    on_relations = {name: type(f) for name, f in filterset.base_filters.items() if f.field_name in relations}
    assert on_relations, f"{filterset.__name__} has no filter on its foreign key"
    assert set(on_relations.values()) == {filters.ULIDFilter}, on_relations


def test_it_filters_gate_results_by_outcome(api: APIClient) -> None:
    session = make_session()
    for passed in (True, False, False):
        GateResult.objects.create(session=session, gate="tests", iteration=1, passed=passed)
    assert [row["passed"] for row in api.get("/api/v1/gate-results/", {"passed": "false"}).json()["results"]] == [
        False, False]
    assert api.get("/api/v1/gate-results/", {"session": session.pk, "passed": "true"}).json()["count"] == 1

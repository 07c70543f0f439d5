"""A generic API test mixin (NetBox style): list/get/create/update/delete/auth/query-count tests
for every resource from a little per-resource data.

Subclass in a test module and set:
    model           the model class
    basename        the router basename ("session" → "session-list" / "session-detail")
    list_queries    the exact number of queries a list request runs (auth + count + page + prefetches);
                    the same number must hold for 3 rows and for 25, so N+1 regressions fail
    update_payload  a PATCH body that changes at least one field
and implement:
    make_instance(index)  create one row through the ORM (index makes values unique)
    create_payload()      a POST body that creates a valid row
"""

import re
from datetime import timedelta
from typing import Any, NamedTuple

import pytest
from django.db import models
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.api.views import IntegerIdMixin
from ledger_app.stats import STATS
from ralphsite.api_urls import router
from ralphsite.core.activity import owner_session_ids, session_path
from sessions_app.models import Session

pytestmark = pytest.mark.django_db

ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>[^)]*\)")
_METHODS = ("get", "post", "put", "patch", "delete")


class ApiRoute(NamedTuple):
    """One method of one route of the API router (every app's resources, stats included)."""

    prefix: str
    viewset: type
    method: str
    action: str
    detail: bool
    path: str

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"


def lookup_value(viewset: type) -> str:
    """A well-formed identifier for the viewset's detail routes (the row need not exist)."""
    if getattr(viewset, "lookup_field", "pk") == "name":
        return next(iter(STATS))
    return "1" if issubclass(viewset, IntegerIdMixin) else ULID


def api_routes() -> list[ApiRoute]:
    """Every method of every route the router registers and the viewset allows (read from the router,
    so a resource added later is walked too), detail routes filled with a well-formed identifier."""
    routes = []
    for prefix, viewset, _basename in router.registry:
        regex_lookup = router.get_lookup_regex(viewset)
        for route in router.get_routes(viewset):
            mapping = router.get_method_map(viewset, route.mapping)
            regex = route.url.format(prefix=prefix, lookup=regex_lookup, trailing_slash="/")
            path = "/api/v1/" + _GROUP.sub(lookup_value(viewset), regex).strip("^$")
            routes.extend(ApiRoute(prefix, viewset, method, action, route.detail, path)
                          for method, action in mapping.items()
                          if method in _METHODS and method in viewset.http_method_names)
    return routes


def assert_error_shape(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"code", "message", "details"}, body
    assert body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    return body


class APIResourceTests:
    model: type[models.Model]
    basename: str
    list_queries: int
    update_payload: dict[str, Any]
    # Resources without update or delete in the API (append-only rows) set these to False: the same
    # tests then check that the method is refused with 405.
    deletable = True
    updatable = True

    def make_instance(self, index: int) -> models.Model:
        raise NotImplementedError

    def create_payload(self) -> dict[str, Any]:
        raise NotImplementedError

    def list_url(self) -> str:
        return reverse(f"{self.basename}-list")

    def detail_url(self, instance: models.Model) -> str:
        return reverse(f"{self.basename}-detail", args=[instance.pk])

    def test_it_lists(self, api: APIClient) -> None:
        created = [self.make_instance(i) for i in range(3)]
        response = api.get(self.list_url())
        assert response.status_code == 200, response.content
        body = response.json()
        assert {"next", "previous", "results"} <= set(body)
        ids = {str(row["id"]) for row in body["results"]}  # str: integer ids too
        assert {str(obj.pk) for obj in created} <= ids

    def test_it_retrieves(self, api: APIClient) -> None:
        instance = self.make_instance(0)
        response = api.get(self.detail_url(instance))
        assert response.status_code == 200, response.content
        assert response.json()["id"] == instance.pk

    def test_it_returns_404_with_the_error_shape(self, api: APIClient) -> None:
        response = api.get(reverse(f"{self.basename}-detail", args=["01ARZ3NDEKTSV4RRFFQ69G5FAV"]))
        assert response.status_code == 404
        assert set(response.json()) == {"code", "message", "details"}

    def test_it_creates(self, api: APIClient) -> None:
        response = api.post(self.list_url(), self.create_payload(), format="json")
        assert response.status_code == 201, response.content
        assert self.model.objects.filter(pk=response.json()["id"]).exists()

    def test_it_updates(self, api: APIClient) -> None:
        instance = self.make_instance(0)
        if not self.updatable:
            for method in (api.patch, api.put):
                assert_error_shape(method(self.detail_url(instance), {}, format="json"), 405, "method_not_allowed")
            return
        response = api.patch(self.detail_url(instance), self.update_payload, format="json")
        assert response.status_code == 200, response.content
        body = response.json()
        for name, value in self.update_payload.items():
            assert body[name] == value, (name, body[name], value)

    def make_deletable_instance(self, index: int) -> models.Model:
        """A row the resource's delete rule allows (a finished session, say); make_instance by default."""
        return self.make_instance(index)

    def test_it_deletes(self, api: APIClient) -> None:
        instance = self.make_deletable_instance(0)
        if not self.deletable:
            assert_error_shape(api.delete(self.detail_url(instance)), 405, "method_not_allowed")
            assert type(instance).objects.filter(pk=instance.pk).exists()
            return
        response = api.delete(self.detail_url(instance))
        assert response.status_code == 204, response.content
        assert not type(instance).objects.filter(pk=instance.pk).exists()

    def test_its_writes_move_the_activity_of_their_session(self, api: APIClient) -> None:
        """Every write of a row that belongs to a session moves the session's last_activity_at
        (ralphsite.core.activity): create, update and delete through the API."""
        if session_path(self.model) is None:
            return  # rows of no session: nothing to move
        long_ago = timezone.now() - timedelta(days=1)

        def write_moves_activity(write: Any, instance: models.Model | None = None) -> None:
            owners = owner_session_ids([instance]) if instance is not None else set()
            Session.objects.update(last_activity_at=long_ago)
            response = write()
            assert response.status_code in (200, 201, 204), response.content
            if instance is None:
                created = response.json()
                owners = owner_session_ids([self.model.objects.get(pk=created["id"])])
            assert owners, "the row belongs to no session"
            moved = Session.objects.filter(pk__in=owners, last_activity_at__gt=long_ago).count()
            assert moved == len(owners), (write, owners)

        payload = self.create_payload()  # before the clock is set back: it may write parents of its own
        write_moves_activity(lambda: api.post(self.list_url(), payload, format="json"))
        if self.updatable:
            instance = self.make_instance(1)
            write_moves_activity(lambda: api.patch(self.detail_url(instance), self.update_payload, format="json"),
                                 instance)
        if self.deletable:
            instance = self.make_instance(2)
            write_moves_activity(lambda: api.delete(self.detail_url(instance)), instance)

    def test_it_requires_auth(self, anon_api: APIClient) -> None:
        instance = self.make_instance(0)
        for url in (self.list_url(), self.detail_url(instance)):
            assert_error_shape(anon_api.get(url), 401, "not_authenticated")
        assert_error_shape(anon_api.post(self.list_url(), self.create_payload(), format="json"), 401,
                           "not_authenticated")

    def test_it_lists_with_a_constant_number_of_queries(self, api: APIClient, django_assert_num_queries) -> None:
        for i in range(3):
            self.make_instance(i)
        with django_assert_num_queries(self.list_queries):
            assert api.get(self.list_url()).status_code == 200
        for i in range(3, 25):
            self.make_instance(i)
        with django_assert_num_queries(self.list_queries):
            assert api.get(self.list_url(), {"page_size": 25}).status_code == 200

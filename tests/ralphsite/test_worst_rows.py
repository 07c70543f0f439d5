"""The read path never fails on a stored row (issue #26): one row of every model, the worst the database
accepts, written straight through the ORM past the services (JSON of the wrong shape where no CHECK
stops it, NULL wherever allowed, values outside the choices, the longest text, Unicode edge cases),
then every GET route of the API (lists, details, actions, search, statistics), every admin change list
and change page, and the session console: no 500.

Rows are built by `RowBuilder` of the scope walker, taught worse values; a model whose worst row the
database refuses falls back to the plain row (the walker names them, so a new CHECK shows here)."""

from typing import Any

import pytest
from django.contrib import admin
from django.db import IntegrityError, models, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.money import MoneyField, usd_max
from ralphsite.core.service_admin import ReadOnlyPageAdmin
from ralphsite.core.shapes import JSONList, field_shape
from sessions_app.models import Session
from tests.api_mixins import api_routes, lookup_value
from tests.route_rows import ROUTE_MODELS, RowBuilder, route_model, route_path, session_of

pytestmark = pytest.mark.django_db

# Right-to-left override, zero-width joiner sequence, combining accent, astral plane, markup, a quote.
EDGE = "\u202eé\u0301👩‍👩‍👧\u200b\U0001d518<b>&amp;</b>'\""
LONG_TEXT = 20_000  # a text field with no max_length: long enough to page through, short enough for the suite
NOT_A_CHOICE = "zz-not-a-choice"
# Text the database holds to a rule of its own: the worst value it accepts (the longest custom event type).
DATABASE_RULED = {("ledgerevent", "type"): "x-" + "z" * 61}
GET_ROUTES = [route for route in api_routes() if route.method == "get"]


class WorstRowBuilder(RowBuilder):
    """Every field set: NULL where allowed, else the worst value of its type."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.fallbacks: list[str] = []

    def text(self, field: models.Field) -> str:
        size = field.max_length or LONG_TEXT
        return (EDGE * (size // len(EDGE) + 1))[:size]

    def worst(self, field: models.Field) -> Any:
        if (field.model._meta.model_name, field.name) in DATABASE_RULED:
            return DATABASE_RULED[field.model._meta.model_name, field.name]
        if field.null and not isinstance(field, models.ForeignKey):
            return None
        if isinstance(field, models.JSONField):
            shape = field_shape(field)
            if isinstance(shape, JSONList):
                return [None, 5, {"Id": 1}, "text"]  # a list (what the CHECK asks) of items of no shape
            return {"": None, "Id": [EDGE]} if shape is not None else EDGE
        if field.choices and isinstance(field, models.CharField):
            return NOT_A_CHOICE[:field.max_length]
        if field.choices:
            return 99
        if isinstance(field, models.BigIntegerField):
            return BIGINT_MAX
        if isinstance(field, models.IntegerField):
            return 2**31 - 1
        if isinstance(field, MoneyField):
            return usd_max()  # the largest amount the backend's money columns hold, every place used
        if isinstance(field, models.DecimalField):
            return models.DecimalField().to_python("9" * (field.max_digits - field.decimal_places))
        if isinstance(field, models.FloatField):
            return 1.0  # floats are bounded by CHECKs (importance 0 to 1)
        if isinstance(field, models.CharField | models.TextField):
            return self.text(field)
        return self.value(field)

    def row(self, model: type[models.Model]) -> models.Model:
        if model in self.rows:
            return self.rows[model]
        path = session_of(model)
        to_session = path.split("__")[0] if path else None
        values = {}
        for field in model._meta.concrete_fields:
            if field.primary_key or (not field.editable and (field.null or field.has_default())):
                continue
            if not field.editable:  # a counter the services keep (sequence numbers): any value
                values[field.name] = self.value(field)
                continue
            if isinstance(field, models.ForeignKey):
                if field.name == to_session or not field.null:
                    values[field.name] = self.row(field.related_model)
                continue
            values[field.name] = self.worst(field)
        try:
            with transaction.atomic():
                self.rows[model] = model._default_manager.create(**values)
        except IntegrityError:
            self.fallbacks.append(model._meta.label)
            return super().row(model)
        return self.rows[model]


@pytest.fixture
def worst(db) -> dict[type[models.Model], models.Model]:
    builder = WorstRowBuilder(Session.objects.create(key="worst", project_path="/srv/" + EDGE, user_request=EDGE))
    for model in ROUTE_MODELS:
        builder.row(model)
    for model in admin.site._registry:
        if getattr(model, "scope_path", None) is not None:  # ours, not Django's users and groups
            builder.row(model)
    assert not builder.fallbacks, f"the database refused these worst rows: {builder.fallbacks}"
    return builder.rows


def test_every_get_route_reads_the_worst_rows(api: APIClient, worst: dict) -> None:
    session = worst[Session]
    failures = []
    for route in GET_ROUTES:
        path = route_path(route, worst)
        for query in ({}, {"session": session.pk}, {"q": "zz"}):
            response = api.get(path, query)
            unread = route.action == "retrieve" and not query and response.status_code != 200 \
                and route_model(route) in worst \
                and route.path.count(f"/{lookup_value(route.viewset)}/") == 1  # (a nested route names two rows)
            if response.status_code >= 500 or unread:
                failures.append(f"{path} {query}: {response.status_code} {response.content[:300]!r}")
    assert not failures, "\n".join(failures)


def test_every_admin_list_change_page_and_the_console_read_the_worst_rows(admin_client: Client, worst: dict) -> None:
    failures = []
    for model in sorted(admin.site._registry, key=lambda m: m._meta.label):
        opts = model._meta
        pages = [reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")]
        if model in worst:
            pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[worst[model].pk]))
            if isinstance(admin.site._registry[model], ReadOnlyPageAdmin):  # and the raw form behind its page
                pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_edit", args=[worst[model].pk]))
        for page in pages:
            response = admin_client.get(page)
            if response.status_code >= 500:
                failures.append(f"{page}: {response.status_code}")
    assert not failures, "\n".join(failures)

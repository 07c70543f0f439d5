"""One row of every model the API router serves, built generically from each model's fields (so a
model added later needs nothing here): the rows the walker tests send every route
(`tests/ralphsite/test_token_scopes.py`, `tests/ralphsite/test_fast_paths.py`).

Every string of a session's rows carries that session's marker (`marker`), so a response that shows a
row of a session can be told by its text.
"""

import itertools
from decimal import Decimal
from typing import Any

from django.db import models
from django.utils import timezone

from ledger_app.services import event_append_one
from ralphsite.core.access import SCOPE_GLOBAL_ONLY, SCOPE_SHARED, scope_path_of
from sessions_app.models import Session
from tests.api_mixins import ULID, ApiRoute, api_routes

_counter = itertools.count(1)


def route_model(route: ApiRoute) -> type[models.Model] | None:
    """The model a route's viewset serves (None: statistics, search and other routes of no model)."""
    queryset = getattr(route.viewset, "queryset", None)
    return queryset.model if queryset is not None else None


def session_of(model: type[models.Model]) -> str | None:
    """The lookup path from `model` to its session; None for shared and global-only models."""
    path = scope_path_of(model)
    return None if path in (SCOPE_SHARED, SCOPE_GLOBAL_ONLY) else path


def marker(session_key: str) -> str:
    return f"zqx{session_key}zqx"


# Every model the router serves, in a fixed order.
ROUTE_MODELS = sorted({model for route in api_routes() if (model := route_model(route)) is not None},
                      key=lambda model: model._meta.label)


def route_path(route: ApiRoute, rows: dict[type[models.Model], models.Model] | None) -> str:
    """The route's path with the id of the row of its model in `rows` (None: an id that exists nowhere)."""
    model = route_model(route)
    if not route.detail or model is None:
        return route.path
    row = rows.get(model) if rows is not None else None
    placeholder = "/1/" if f"/{ULID}/" not in route.path else f"/{ULID}/"
    missing = "/999999999/" if placeholder == "/1/" else "/01BX5ZZKBKACTAV9WEVGEMMVRZ/"
    path = route.path
    if path.count(placeholder) == 2:  # a nested route (sessions/{session}/tasks/{task}/): the row's session first
        path = path.replace(placeholder, f"/{rows[Session].pk}/" if rows is not None else missing, 1)
    return path.replace(placeholder, f"/{row.pk}/" if row is not None else missing, 1)


class RowBuilder:
    """One row of a model for a session, its required fields filled from their types: the foreign
    key on the model's path to its session leads to that session's row of the related model, other
    required foreign keys to rows of the same session (or, for models of no session, to shared rows)."""

    def __init__(self, session: Session) -> None:
        self.session, self.rows = session, {Session: session}

    def text(self, field: models.Field) -> str:
        value = f"{marker(self.session.key)}-{field.name}-{next(_counter)}"
        return value[:field.max_length] if field.max_length else value

    def value(self, field: models.Field) -> Any:
        if field.choices:
            return field.choices[0][0]
        if isinstance(field, models.ForeignKey):
            return self.row(field.related_model)
        if isinstance(field, models.JSONField):
            return {"note": self.text(field)}
        if isinstance(field, models.CharField | models.TextField):
            return self.text(field)
        if isinstance(field, models.DateTimeField):
            return timezone.now()
        if isinstance(field, models.DecimalField):
            return Decimal("0.01")
        if isinstance(field, models.IntegerField | models.FloatField):
            return 1
        if isinstance(field, models.BooleanField):
            return False
        raise TypeError(f"No value for {field!r}: teach RowBuilder.value this field type.")

    def row(self, model: type[models.Model]) -> models.Model:
        if model in self.rows:
            return self.rows[model]
        path = session_of(model)
        to_session = path.split("__")[0] if path else None
        values = {}
        for field in model._meta.concrete_fields:
            needed = field.name == to_session or not (field.primary_key or field.null or field.has_default()
                                                      or getattr(field, "auto_now", False)
                                                      or getattr(field, "auto_now_add", False))
            if needed:
                values[field.name] = self.value(field)
            elif isinstance(field, models.CharField | models.TextField) and not field.choices \
                    and field.editable and not field.primary_key:
                values[field.name] = self.text(field)  # optional text marked too: names, agents, models
        if model._meta.label == "ledger_app.LedgerEvent":
            session = values.pop("session")  # appended through the chain's service, as the API does
            self.rows[model] = event_append_one(item={**values, "session_id": session.pk, "type": "x-note"})[0]
        else:
            self.rows[model] = model._default_manager.create(**values)
        return self.rows[model]

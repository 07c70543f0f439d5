"""Session activity: every write that belongs to a session moves the session's `last_activity_at`.

Interrupted-run detection (`sessions/interrupted/`, the dashboard) and `resume/`'s `session_active`
check read `last_activity_at`, so a loop busy writing anything (events, issues, checkpoints, token
usage, attempts, messages of its chats) is never listed as interrupted.

The rule is applied in the write paths, not per service: `ralphsite.core.services.instance_create`,
`instance_update` and `instance_delete` (which the API's base viewset, the admin and most domain
services write through) call `owners_touch`; the few paths that write with their own SQL for speed
(ledger appends, message appends, versioned chat updates, bulk token usage) call `sessions_touch`
with the session ids they already hold, and usage totals (`sessions_app.services.usage.session_usage_add`)
move the time in the same UPDATE as the totals.

Which session a row belongs to is its model's `scope_path` (`ralphsite.core.access`: the lookup from the
row to its session, stated next to each model, `run__chat__session`): the same path that scopes API
tokens.
"""

from collections.abc import Iterable
from functools import cache
from typing import Any

from django.db import models
from django.utils import timezone

from ralphsite.core.access import SCOPE_GLOBAL_ONLY, SCOPE_SHARED

_SESSION_MODEL = ("sessions_app", "Session")


@cache
def session_path(model: type[models.Model]) -> str | None:
    """The lookup from a row of `model` to its session: the model's `scope_path` (ralphsite.core.access);
    None for the session itself and for rows of no session."""
    path = getattr(model, "scope_path", None)
    return None if path in (None, "", SCOPE_SHARED, SCOPE_GLOBAL_ONLY) else path


def _owner_of(instance: models.Model, path: str) -> Any:
    """The session id through relations already loaded on the instance, or the instance itself (to
    look up) when a step along the path is not loaded."""
    *steps, last = path.split("__")
    current: Any = instance
    for step in steps:
        if not type(current)._meta.get_field(step).is_cached(current):
            return instance
        current = getattr(current, step)
        if current is None:
            return None
    return getattr(current, f"{last}_id")


def owners_touch(instances: Iterable[models.Model]) -> None:
    """Touch the sessions the instances belong to (see the module docstring)."""
    sessions_touch(owner_session_ids(instances))


def owner_session_ids(instances: Iterable[models.Model]) -> set[str]:
    """The ids of the sessions the instances belong to (and move the activity of); ids not loaded on
    the instances are read in one query per model."""
    session_ids: set[str] = set()
    unresolved: dict[type[models.Model], list[Any]] = {}
    for instance in instances:
        model = type(instance)
        path = session_path(model)
        if path is None:
            continue
        owner = _owner_of(instance, path)
        if isinstance(owner, models.Model):
            unresolved.setdefault(model, []).append(instance.pk)
        elif owner is not None:
            session_ids.add(owner)
    for model, pks in unresolved.items():
        path = session_path(model)
        session_ids.update(model._default_manager.filter(pk__in=pks).exclude(**{f"{path}__isnull": True})
                           .values_list(path, flat=True))
    return session_ids


def sessions_touch(session_ids: Iterable[str | None]) -> None:
    """Set `last_activity_at` to now on these sessions (one UPDATE)."""
    ordered = sorted({session_id for session_id in session_ids if session_id})
    if ordered:
        from django.apps import apps

        # In a fixed order: two transactions touching the same sessions never wait on each other crosswise.
        apps.get_model(*_SESSION_MODEL).objects.filter(pk__in=ordered).update(last_activity_at=timezone.now())

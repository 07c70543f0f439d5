"""The admin's shared base: lists people can scan on tables of any size, and writes through the services.

* `RalphModelAdmin` is the base of every ModelAdmin of the project (a test walks the registry): its
  lists never count a big table (`CappedCountPaginator`) and show no facet counts; the `column_*`
  helpers build the columns people scan first (status as a coloured badge, truncated text, time
  ago, the session as a link to its console).
* `LongTextMixin` (in both bases, and in the read-only inlines) keeps record pages small whatever a text
  or JSON field holds: a long value is shown as its beginning and a link to the whole, read-only, as
  plain text (`<id>/text/<field>/`).
* `ServiceModelAdmin` adds the write path: saves and deletes go through the services, as API writes
  do, and a model's domain verbs are buttons (`OperatorAction`) calling the same services.
* `ReadOnlyPageAdmin` gives a record a read-only page and moves Django's raw form behind an "Edit" link.
* `SessionFilter` picks one session by autocomplete (on a million sessions the list is never loaded).
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property, wraps
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.core.paginator import Paginator
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.defaultfilters import linebreaksbr
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.timesince import timesince
from django.views.decorators.http import require_POST

from ralphsite.core.access import person_name, session_model
from ralphsite.core.errors import DomainError
from ralphsite.core.models import ApiToken
from ralphsite.core.money import MoneyField, usd_text
from ralphsite.core.writes import ModelWrites, writes_for

# A list counts at most this many rows; past it the page says "more than 10,000".
COUNT_CAP = 10_000


class CappedCountPaginator(Paginator):
    """Counts at most COUNT_CAP + 1 rows (`SELECT COUNT(*) FROM (… LIMIT 10001)`): a bounded read
    whatever the table's size, where Django's changelist counts the whole filtered table on every
    page (a million ledger events: a full index scan per page view). Past the cap the count is the
    cap plus one, so the pages up to the cap stay reachable and `count_is_capped` tells the template."""

    @cached_property
    def count(self) -> int:
        if isinstance(self.object_list, QuerySet):
            return self.object_list.order_by()[:COUNT_CAP + 1].count()
        return len(self.object_list)

    @property
    def count_is_capped(self) -> bool:
        return self.count > COUNT_CAP

    @property
    def count_label(self) -> str:
        return f"more than {COUNT_CAP:,}" if self.count_is_capped else f"{self.count:,}"


# A text or JSON value longer than this is shown on a record's page as its first TEXT_SHOWN_CHARS characters
# and a link to the whole: a page carrying a megabyte value froze browsers (issue #26 §3).
TEXT_SHOWN_CHARS = 5_000


def _long_text_field(field: Any) -> bool:
    return isinstance(field, models.TextField | models.JSONField)


def _text_of(obj: models.Model, field: models.Field) -> str:
    """The value as its whole-text view serves it: text as stored, JSON indented."""
    value = getattr(obj, field.attname)
    if isinstance(field, models.JSONField):
        return "" if value is None else json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return value or ""


def text_shown(obj: models.Model, field: models.Field, empty: str) -> str:
    """A value as a record's page shows it (JSON indented in a <pre>): whole when short, else its beginning
    and a link to the whole (`LongTextMixin.whole_text_view` of the record's own admin; the length only
    where the record has no admin)."""
    text = _text_of(obj, field)
    if not text:
        return empty
    shown = text[:TEXT_SHOWN_CHARS]
    shown = format_html('<pre class="rl-json">{}</pre>', shown) if isinstance(field, models.JSONField) \
        else linebreaksbr(shown)
    if len(text) <= TEXT_SHOWN_CHARS:
        return shown
    opts, length = obj._meta, f"{len(text):,}"
    try:
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_text", args=[obj.pk, field.name])
    except NoReverseMatch:
        return format_html('{}… <span class="rl-text-length">({} characters)</span>', shown, length)
    return format_html('{}… <a class="rl-whole-text" href="{}">read all {} characters</a>', shown, url, length)


class LongTextMixin:
    """Text and JSON fields shown read-only (and, on a record's page, any whose value is long) go through
    `text_shown`, read-only money through `usd_text` (not padded to the column's ten places): the field's
    name in the fieldsets is replaced by a display of the same name and label."""

    model: type[models.Model]

    def _shown(self, name: str) -> Callable[[Any], str]:
        cache = self.__dict__.setdefault("_shown_displays", {})
        if name not in cache:
            field = self.model._meta.get_field(name)

            @admin.display(description=field.verbose_name)
            def shown(obj: models.Model) -> str:
                if isinstance(field, MoneyField):
                    value = getattr(obj, field.name)
                    return self.get_empty_value_display() if value is None else usd_text(value)
                return text_shown(obj, field, self.get_empty_value_display())
            cache[name] = _named(shown, name)  # the help text and the CSS class are the field's
        return cache[name]

    def _long_values(self, obj: models.Model | None) -> list[str]:
        """The text fields of this record too long to edit in place (a form would carry the whole)."""
        if obj is None or not isinstance(obj, self.model):
            return []
        return [field.name for field in self.model._meta.concrete_fields
                if _long_text_field(field) and len(_text_of(obj, field)) > TEXT_SHOWN_CHARS]

    def get_readonly_fields(self, request: HttpRequest, obj: models.Model | None = None) -> list[Any]:
        names = [*super().get_readonly_fields(request, obj), *self._long_values(obj)]  # type: ignore[misc]
        names = list(dict.fromkeys(names))
        return names + [self._shown(name) for name in names if isinstance(name, str) and self._shown_field(name)]

    def get_fieldsets(self, request: HttpRequest, obj: models.Model | None = None) -> list[Any]:
        readonly = {getattr(name, "__name__", name) for name in self.get_readonly_fields(request, obj)}

        def shown(names: Iterable[Any]) -> list[Any]:
            swapped = [self._shown(name) if isinstance(name, str) and name in readonly and self._shown_field(name)
                       else name for name in names]
            return list(dict.fromkeys(swapped))
        return [(title, {**options, "fields": shown(options["fields"])})
                for title, options in super().get_fieldsets(request, obj)]  # type: ignore[misc]

    def _text_field(self, name: str) -> bool:
        try:
            return _long_text_field(self.model._meta.get_field(name))
        except FieldDoesNotExist:
            return False

    def _money_field(self, name: str) -> bool:
        try:
            return isinstance(self.model._meta.get_field(name), MoneyField)
        except FieldDoesNotExist:
            return False

    def _shown_field(self, name: str) -> bool:
        """Whether a read-only field is shown through `_shown` (a text or JSON field, or money)."""
        return self._text_field(name) or self._money_field(name)

    def whole_text_view(self, request: HttpRequest, object_id: str, field: str) -> HttpResponse:
        """One field's whole value, read-only, as plain text; only a field this page shows, to a person
        who may view the record."""
        obj = self.get_object(request, unquote(object_id))  # type: ignore[attr-defined]
        if obj is None or not self._text_field(field):
            raise Http404(f"No {self.model._meta.verbose_name} {object_id} or no text field {field!r}.")
        if not self.has_view_or_change_permission(request, obj):  # type: ignore[attr-defined]
            raise PermissionDenied
        shown = {getattr(name, "__name__", name) for name in flatten_fieldsets(self.get_fieldsets(request, obj))}
        if field not in shown:
            raise Http404(f"The {self.model._meta.verbose_name} page does not show {field!r}.")
        response = HttpResponse(_text_of(obj, self.model._meta.get_field(field)),
                                content_type="text/plain; charset=utf-8")
        response["X-Content-Type-Options"] = "nosniff"
        return response


class LongValueShown(forms.Widget):
    """In place of an editable inline row's input, a value too long to edit there: its beginning and a link to
    the whole (`text_shown`, as the record's own page shows it). No input is drawn, so the page stays small."""

    def __init__(self, obj: models.Model, field: models.Field) -> None:
        super().__init__()
        self.obj, self.field = obj, field

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> str:
        return text_shown(self.obj, self.field, "")


class LongValuesKeptForm(forms.ModelForm):
    """An inline row's form in which a stored text or JSON value too long to edit in place is read-only
    (`LongValueShown`): its field is disabled, so the row keeps the stored value whatever is posted, and the
    row's other fields still save."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance._state.adding:
            return
        for name, form_field in self.fields.items():
            try:
                model_field = self.instance._meta.get_field(name)
            except FieldDoesNotExist:
                continue
            if _long_text_field(model_field) and len(_text_of(self.instance, model_field)) > TEXT_SHOWN_CHARS:
                form_field.disabled = True
                form_field.widget = LongValueShown(self.instance, model_field)
                if isinstance(form_field, forms.CharField):
                    form_field.strip = False  # the stored text as it is, should the row save


class LongTextInline(LongTextMixin, admin.TabularInline):
    """The base of every inline (a test walks the registry): a long value, in a read-only field or in an editable
    row, is shown as its beginning and a link to the whole, never as a textarea carrying a megabyte."""

    form = LongValuesKeptForm


class RalphModelAdmin(LongTextMixin, admin.ModelAdmin):
    """Lists for people, on tables of any size (every ModelAdmin of the project derives from this)."""

    paginator = CappedCountPaginator
    show_full_result_count = False  # a second, unfiltered COUNT(*) per page
    show_facets = admin.ShowFacets.NEVER  # a count per filter choice would read the whole table
    list_per_page = 50

    def __init__(self, model: type[models.Model], admin_site: admin.AdminSite) -> None:
        super().__init__(model, admin_site)
        # Django's date drill-down reads every row's date (SELECT DISTINCT year …) on each page view:
        # the same dates are offered as a filter of fixed ranges instead (see get_list_filter).
        self.date_filter_field, self.date_hierarchy = self.date_hierarchy, None

    def model_permission_check(self, request: HttpRequest, *, change: bool = False) -> None:
        """Before a view of one record looks it up: 403 for a person who may not view (or `change`) this model
        at all, so that a record that exists and one that does not answer alike (no existence oracle). Django's
        own change and delete views ask first; its history view, and ours below, looked the record up first."""
        allowed = self.has_change_permission(request) if change else self.has_view_or_change_permission(request)
        if not allowed:
            raise PermissionDenied

    def history_view(self, request: HttpRequest, object_id: str,
                     extra_context: dict[str, Any] | None = None) -> HttpResponse:
        self.model_permission_check(request)
        return super().history_view(request, object_id, extra_context)

    def record_view(self, view: Callable[..., HttpResponse], *, change: bool = False) -> Callable[..., HttpResponse]:
        """A page of one record of ours (`<id>/<page>/`) as the admin serves it: logged-in staff only, and
        `model_permission_check` before the view looks its record up."""
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            self.model_permission_check(request, change=change)
            return view(request, *args, **kwargs)
        return self.admin_site.admin_view(checked)

    def get_urls(self) -> list:
        opts = self.model._meta
        return [path("<path:object_id>/text/<str:field>/", self.record_view(self.whole_text_view),
                     name=f"{opts.app_label}_{opts.model_name}_text"), *super().get_urls()]

    @property
    def media(self) -> forms.Media:
        media = super().media
        if any(isinstance(spec, type) and issubclass(spec, SessionFilter) for spec in self.get_list_filter(None)):
            media += session_filter_media()
        return media

    def formfield_for_choice_field(self, db_field: models.Field, request: HttpRequest, **kwargs: Any) -> Any:
        """A value outside the choices is refused in the API's words (`ChoiceFieldNamingAllowed`)."""
        field = super().formfield_for_choice_field(db_field, request, **kwargs)
        allowed = ", ".join(str(value) for value, _label in db_field.flatchoices)
        field.error_messages["invalid_choice"] = f"%(value)r is not a valid choice; allowed: {allowed}."
        return field

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        """People scan names, states and times: a bare `id` column goes last, a bare `session`
        column becomes the session's key linking to its console, a text or JSON column its beginning,
        a money column the API's text of it."""
        columns = [column_session() if column == "session" else
                   column_text(column) if isinstance(column, str) and self._text_field(column) else
                   column_usd(column, description=self.model._meta.get_field(column).verbose_name)
                   if isinstance(column, str) and self._money_field(column) else column
                   for column in super().get_list_display(request)]
        return [column for column in columns if column != "id"] + (["id"] if "id" in columns else [])

    def get_list_display_links(self, request: HttpRequest, list_display: list[Any]) -> list[Any] | None:
        """The first column links to the row, unless it is already a link (the session's)."""
        if self.list_display_links or not list_display:
            return super().get_list_display_links(request, list_display)
        plain = [column for column in list_display if getattr(column, "__name__", "") != "session_link"]
        return plain[:1] or list_display[:1]

    def get_list_filter(self, request: HttpRequest | None) -> list[Any]:
        """Rows of one session are a filter away on every list of a model with a `session` key."""
        filters = list(super().get_list_filter(request))
        has_session = any(field.name == "session" and field.related_model is session_model()
                          for field in self.model._meta.concrete_fields)
        if has_session and not any(isinstance(spec, type) and issubclass(spec, SessionFilter) for spec in filters):
            filters.insert(0, SessionFilter)
        dated = {spec[0] for spec in filters if isinstance(spec, tuple)}
        if self.date_filter_field and self.date_filter_field not in dated:
            filters.append((self.date_filter_field, admin.DateFieldListFilter))
        return filters


@dataclass(frozen=True)
class OperatorAction:
    """A button on a record's page that calls one service, as the API's action of the same verb does.

    `run(request, obj, inputs)` calls the service and returns the message shown after it (a
    DomainError is shown as an error instead); `shown(obj)` says whether the button applies to the
    record as it is; `inputs` are the fields sent with it: (name, label) for text, (name, label,
    choices) for a choice among (value, label) pairs."""

    name: str
    label: str
    run: Callable[[HttpRequest, Any, dict[str, str]], str]
    shown: Callable[[Any], bool] = lambda obj: True
    style: str = ""  # "danger" or "primary": how loud the button is
    inputs: tuple[tuple[Any, ...], ...] = ()
    help: str = ""
    confirm: str = ""  # asked before the form is sent (ralphsite/static/ralphsite/confirm.js)


def operator_name(request: HttpRequest) -> str:
    """Who acts, as ledger events name agents: the person's user name, marked as a person."""
    return person_name(request.user)


class ServiceModelAdmin(RalphModelAdmin):
    """Admin writes go through the model's services from the writes registry (`ralphsite.core.writes`), as
    API writes do; models with rules offer their domain verbs as `operator_actions` (buttons on the
    record's page, POSTed to `<id>/act/<name>/`)."""

    operator_actions: tuple[OperatorAction, ...] = ()

    def get_urls(self) -> list:
        opts = self.model._meta
        act = self.record_view(require_POST(self.operator_action_view), change=True)
        return [path("<path:object_id>/act/<str:name>/", act, name=f"{opts.app_label}_{opts.model_name}_act"),
                *super().get_urls()]

    def operator_actions_for(self, request: HttpRequest, obj: models.Model | None) -> list[dict[str, Any]]:
        if obj is None or not self.has_change_permission(request, obj):
            return []
        opts = self.model._meta
        return [{"name": action.name, "label": action.label, "style": action.style, "help": action.help,
                 "confirm": action.confirm,
                 "inputs": [{"name": field, "label": label, "choices": choices[0] if choices else None}
                            for field, label, *choices in action.inputs],
                 "url": reverse(f"admin:{opts.app_label}_{opts.model_name}_act", args=[obj.pk, action.name])}
                for action in self.operator_actions if action.shown(obj)]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id)) if request.method == "GET" else None
        context = {"operator_actions": self.operator_actions_for(request, obj), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, context)

    def operator_action_view(self, request: HttpRequest, object_id: str, name: str) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        action = next((action for action in self.operator_actions if action.name == name), None)
        if obj is None or action is None:
            raise Http404(f"No {self.model._meta.verbose_name} {object_id} or no action {name!r}.")
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        inputs = {field: request.POST.get(field, "").strip() for field, *_label in action.inputs}
        try:
            self.message_user(request, action.run(request, obj, inputs), messages.SUCCESS)
        except DomainError as error:
            self.message_user(request, f"{action.label}: {error.message}", messages.ERROR)
        back = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
            opts = self.model._meta
            back = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        return HttpResponseRedirect(back)

    # A service refusing a save or a delete (a 409 or 400 in the API) is the same refusal here: the
    # transaction Django opened for the page is rolled back, and the person reads the reason.

    def changeform_view(self, request: HttpRequest, object_id: str | None = None, form_url: str = "",
                        extra_context: dict[str, Any] | None = None) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as error:
            self.message_user(request, f"Not saved: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(self, request: HttpRequest, object_id: str,
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except DomainError as error:
            self.message_user(request, f"Not deleted: {error.message}", messages.ERROR)
            opts = self.model._meta
            return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_change",
                                                args=[unquote(object_id)]))

    def response_action(self, request: HttpRequest, queryset: QuerySet, **kwargs: Any) -> HttpResponse | None:
        # **kwargs: Django 6.1 passes `action_location` (actions on the change form too); 5.2 passes none.
        try:
            with transaction.atomic():  # a bulk action is all or nothing, as one API call is
                return super().response_action(request, queryset, **kwargs)
        except DomainError as error:
            self.message_user(request, f"Nothing done: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    @property
    def writes(self) -> ModelWrites:
        return writes_for(self.model)

    def _model_data(self, form: forms.ModelForm, names: Iterable[str]) -> dict[str, Any]:
        concrete = {f.name for f in self.model._meta.concrete_fields}
        return {name: form.cleaned_data[name] for name in names if name in concrete}

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        if change:
            self.writes.update(self.model._default_manager.get(pk=obj.pk), self._model_data(form, form.changed_data))
        else:
            obj.pk = self.writes.create(self._model_data(form, form.cleaned_data)).pk

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        self.writes.delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.writes.delete(obj)



class ReadOnlyPageAdmin(ServiceModelAdmin):
    """A record people read more than they edit (history: a task and its attempts, a session's console):
    its page (`<id>/change/`, where every link to it leads) is drawn read-only from `read_only_template`
    with `read_only_context`, with the record's domain verbs as buttons; Django's raw form is at
    `<id>/edit/`, linked by an explicit "Edit" for people who may change the record, so a stray click
    cannot rewrite history."""

    read_only_template = ""
    read_only_label = "View"  # the edit form's link back to the page

    def get_urls(self) -> list:
        opts = self.model._meta
        edit = self.record_view(self.edit_view)
        return [path("<path:object_id>/edit/", edit, name=f"{opts.app_label}_{opts.model_name}_edit"),
                *super().get_urls()]

    def edit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Django's change form of the raw record (its POST comes back here)."""
        opts = self.model._meta
        back = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[unquote(object_id)])
        return super().change_view(request, object_id,
                                   extra_context={"read_only_url": back, "read_only_label": self.read_only_label})

    def read_only_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        """What the read-only page shows besides the record itself: at least its `title`."""
        raise NotImplementedError

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if request.method != "GET":
            return super().change_view(request, object_id, form_url, extra_context)
        self.model_permission_check(request)
        opts = self.model._meta
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return self._get_obj_does_not_exist_redirect(request, opts, object_id)
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        may_change = self.has_change_permission(request, obj)
        context = {
            **self.admin_site.each_context(request),
            "opts": opts, "original": obj, "subtitle": None,
            "edit_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_edit", args=[obj.pk]) if may_change else "",
            "history_url": reverse(f"admin:{opts.app_label}_{opts.model_name}_history", args=[obj.pk]),
            "operator_actions": self.operator_actions_for(request, obj),
            **self.read_only_context(request, obj),
            **(extra_context or {}),
        }
        return TemplateResponse(request, self.read_only_template, context)


# -- columns people scan ------------------------------------------------------------------------

def status_badge(value: str, label: str | None = None) -> str:
    """A coloured pill; the colour comes from the value (ralphsite/static/ralphsite/admin.css)."""
    if not value:
        return "—"
    return format_html('<span class="rl-badge rl-v-{}">{}</span>', value, label or value.replace("_", " "))


def ago_text(moment: datetime) -> str:
    """Under a minute "just now" (timesince says "0 minutes"), else its largest unit: "3 hours ago"."""
    now = timezone.now()
    if now - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment, now).split(',')[0]} ago"


def time_ago(moment: Any) -> str:
    if moment is None:
        return "—"
    return format_html('<time datetime="{}" title="{}">{}</time>', moment.isoformat(),
                       moment.strftime("%Y-%m-%d %H:%M:%S UTC"), ago_text(moment))


def truncated(text: str, length: int) -> str:
    text = " ".join((text or "").split())
    if not text:
        return "—"
    if len(text) <= length:
        return text
    return format_html('<span title="{}">{}…</span>', text[:1000], text[:length - 1])


def _named(function: Callable[[Any], str], name: str) -> Callable[[Any], str]:
    function.__name__ = name  # the column's CSS class and the test's handle: column-<name>
    return function


def column_status(field: str = "status", *, description: str | None = None) -> Callable[[Any], str]:
    @admin.display(description=description or field.replace("_", " "), ordering=field)
    def show(obj: Any) -> str:
        value = getattr(obj, field)
        display = getattr(obj, f"get_{field}_display", None)
        return status_badge(value, display() if display else None)
    return _named(show, f"{field}_badge")


def column_flag(field: str, *, yes: str, no: str, description: str) -> Callable[[Any], str]:
    """A boolean as a badge that says what it means ("processed" / "pending")."""
    @admin.display(description=description, ordering=field)
    def show(obj: Any) -> str:
        return status_badge(yes if getattr(obj, field) else no)
    return _named(show, f"{field}_badge")


def column_text(field: str, *, length: int = 80, description: str | None = None) -> Callable[[Any], str]:
    @admin.display(description=description or field.replace("_", " "))
    def show(obj: Any) -> str:
        value = getattr(obj, field)
        return truncated(value if value is None or isinstance(value, str) else json.dumps(value), length)
    return _named(show, f"{field}_short")


def column_usd(field: str, *, description: str | None = None) -> Callable[[Any], str]:
    """A money column as the API writes it (`usd_text`: six places, more only when the amount has them), not
    padded to the column's ten; named and sorted as the field."""
    @admin.display(description=description or field.replace("_", " "), ordering=field)
    def show(obj: Any) -> str:
        value = getattr(obj, field)
        return "-" if value is None else usd_text(value)
    return _named(show, field)


def column_ago(field: str, *, description: str | None = None) -> Callable[[Any], str]:
    @admin.display(description=description or field.removesuffix("_at").replace("_", " "), ordering=field)
    def show(obj: Any) -> str:
        return time_ago(getattr(obj, field))
    return _named(show, f"{field}_ago")


def session_label(session_id: str | None, key: str = "") -> str:
    return key or (f"…{session_id[-8:]}" if session_id else "—")


def column_session(path: str = "session") -> Callable[[Any], str]:
    """The session's key (or the end of its id) linking to its console; `path` follows relations
    (`run__chat__session`), every one of them select_related by the admin."""
    @admin.display(description="session")
    def show(obj: Any) -> str:
        session = obj
        for name in path.split("__"):
            session = getattr(session, name, None)
            if session is None:
                return "—"
        return format_html('<a href="{}" title="{}">{}</a>', reverse("admin:sessions_app_session_change",
                                                                     args=[session.pk]),
                           session.pk, session_label(session.pk, session.key))
    return _named(show, "session_link")


# -- the session filter -------------------------------------------------------------------------

class SessionFilter(admin.SimpleListFilter):
    """One session's rows, chosen with an autocomplete box (the admin's own select2 over the
    sessions' search) or by a link `?session=<id>` (the console links every list this way). It never
    lists the sessions, so the page costs the same with ten sessions or a million.

    `path` is the lookup from the listed model to the session id (`session_id`, `run__chat__session_id`);
    make one with `SessionFilter.on(path)`."""

    title = "session"
    parameter_name = "session"
    template = "admin/ralphsite/session_filter.html"
    path = "session_id"

    @classmethod
    def on(cls, path: str) -> type["SessionFilter"]:
        return type("SessionFilter", (cls,), {"path": path})

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        # Only the selected session (one query by primary key); a blank choice otherwise, so the
        # sidebar shows the filter at all.
        if not self.value():
            return [("", "")]
        key = session_model().objects.filter(pk=self.value()).values_list("key", flat=True).first()
        return [(self.value(), session_label(self.value(), key or ""))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(**{self.path: self.value()}) if self.value() else queryset

    def choices(self, changelist: Any) -> Iterable[dict[str, Any]]:
        selected = self.lookup_choices[0] if self.value() else None
        yield {
            "selected": selected,
            "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
            "parameter": self.parameter_name,
            "autocomplete_url": reverse("admin:autocomplete"),
        }


# -- a date range -------------------------------------------------------------------------------

class DateRangeFilter(admin.FieldListFilter):
    """Rows of a datetime field between two days (UTC, both included), picked with two date inputs:
    `?<field>__since=2026-11-01&<field>__until=2026-11-24`. A plain GET form, no script; the other
    filters ride along as hidden inputs."""

    template = "admin/ralphsite/date_range_filter.html"

    def __init__(self, field: Any, request: HttpRequest, params: dict[str, Any], model: Any,
                 model_admin: admin.ModelAdmin, field_path: str) -> None:
        self.since_parameter, self.until_parameter = f"{field_path}__since", f"{field_path}__until"
        super().__init__(field, request, params, model, model_admin, field_path)
        self.days = {name: self._day(name) for name in (self.since_parameter, self.until_parameter)}

    def _day(self, parameter: str) -> date | None:
        value = self.used_parameters.get(parameter)
        value = value[-1] if isinstance(value, list) else value
        if not value:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError as error:  # the admin answers with its "?e=1" page, not a 500
            raise IncorrectLookupParameters(f"{parameter}: {value!r} is not a date (YYYY-MM-DD).") from error

    def expected_parameters(self) -> list[str]:
        return [self.since_parameter, self.until_parameter]

    def has_output(self) -> bool:
        return True

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        since, until = self.days[self.since_parameter], self.days[self.until_parameter]
        if since:
            queryset = queryset.filter(**{f"{self.field_path}__gte": datetime.combine(since, time.min, UTC)})
        if until:
            next_day = datetime.combine(until, time.min, UTC) + timedelta(days=1)
            queryset = queryset.filter(**{f"{self.field_path}__lt": next_day})
        return queryset

    def choices(self, changelist: Any) -> Iterable[dict[str, Any]]:
        others = changelist.get_filters_params()
        hidden = [(name, value) for name, values in others.items() if name not in self.expected_parameters()
                  for value in (values if isinstance(values, list) else [values])]
        yield {"since": self.days[self.since_parameter], "until": self.days[self.until_parameter],
               "since_parameter": self.since_parameter, "until_parameter": self.until_parameter,
               "hidden": hidden, "clear_url": changelist.get_query_string(remove=self.expected_parameters())}


def session_filter_media() -> forms.Media:
    """The admin's select2 autocomplete (jQuery, select2, autocomplete.js) and our filter's script."""
    return (AutocompleteSelect(ApiToken._meta.get_field("session"), admin.site).media
            # Listed with what it needs first, so the merge puts it after jQuery, jquery.init and select2.
            + forms.Media(js=["admin/js/vendor/jquery/jquery.min.js", "admin/js/jquery.init.js",
                              "admin/js/autocomplete.js", "ralphsite/session_filter.js"]))

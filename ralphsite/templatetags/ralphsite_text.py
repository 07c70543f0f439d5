"""`{% text_shown record "field" %}`: a record's text or JSON field as its admin page shows it, the beginning
of a long value and a link to the whole (`ralphsite.core.service_admin.text_shown`), for the pages the
admin's forms do not draw (the console, transcripts)."""

from django import template
from django.db import models

from ralphsite.core.service_admin import text_shown as shown

register = template.Library()


@register.simple_tag(name="text_shown")
def text_shown(record: models.Model, name: str) -> str:
    return shown(record, record._meta.get_field(name), "")

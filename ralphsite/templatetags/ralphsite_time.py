"""`{{ moment|ago }}`: "just now", "3 minutes ago", as the lists' time columns and the live header say it."""

from datetime import datetime

from django import template

from ralphsite.core.service_admin import ago_text

register = template.Library()


@register.filter
def ago(moment: datetime | None) -> str:
    return ago_text(moment) if moment else "—"

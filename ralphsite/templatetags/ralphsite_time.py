"""Ages of moments: `{{ moment|ago }}` ("just now", "3 minutes ago", as the lists' time columns and the
console say it) and `{{ moment|age:how }}`, which the console's ages use (admin/ralphsite/ago.html;
ralphsite/static/ralphsite/live.js counts them on in the browser, in the same words)."""

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince, timeuntil

from ralphsite.core.service_admin import ago_text

register = template.Library()


@register.filter
def ago(moment: datetime | None) -> str:
    return ago_text(moment) if moment else "—"


@register.filter
def age(moment: datetime | None, how: str = "") -> str:
    """"ago" (the default) as `ago`; "for": how long since ("under a minute", "3 minutes"); "in": how
    long until ("in under a minute", "in 3 minutes", "expired" once past)."""
    if moment is None:
        return "—"
    now = timezone.now()
    if how == "for":
        return "under a minute" if now - moment < timedelta(minutes=1) else timesince(moment, now).split(",")[0]
    if how == "in":
        if moment <= now:
            return "expired"
        if moment - now < timedelta(minutes=1):
            return "in under a minute"
        return f"in {timeuntil(moment, now).split(',')[0]}"
    return ago_text(moment)

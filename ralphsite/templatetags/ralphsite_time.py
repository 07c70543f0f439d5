"""Times for people: `{{ moment|ago }}` ("just now", "3 minutes ago", as the lists' time columns and the
console say it), `{{ moment|age:how }}`, which the console's ages use (admin/ralphsite/ago.html;
ralphsite/static/ralphsite/live.js counts them on in the browser, in the same words), and
`{{ timedelta|duration }}` ("2 h 5 min", "3 min 20 s", "42 s")."""

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


@register.filter
def duration(span: timedelta | None) -> str:
    """A length of time in its two largest units: "2 h 5 min", "3 min 20 s", "42 s"; "—" for none."""
    if span is None:
        return "—"
    seconds = max(int(span.total_seconds()), 0)
    hours, minutes, seconds = seconds // 3600, seconds // 60 % 60, seconds % 60
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"

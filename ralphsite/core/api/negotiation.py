"""Content negotiation with a shortcut for what agents send."""

from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

JSON = "application/json"
# Accept headers that choose the first JSON renderer: no header, anything, or JSON itself.
_JSON_ACCEPTS = frozenset({"", "*/*", JSON})


class RalphContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, answered without parsing when the request takes JSON as it comes.

    Every agent call sends `Accept: application/json` (or nothing); DRF parsed and ranked the
    header on each request to reach the same first renderer. Any other header, a `?format=`, or
    a first renderer that is not JSON goes through DRF's full algorithm.

    A `?format=` no renderer of the route serves is a 400 naming the ones it does, as for any other
    query parameter (DRF answers 404, and ignores an empty one).
    """

    def select_renderer(self, request: Request, renderers: list[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[BaseRenderer, str]:
        if format_suffix is None and renderers and renderers[0].media_type == JSON \
                and request.META.get("HTTP_ACCEPT", "") in _JSON_ACCEPTS \
                and self.settings.URL_FORMAT_OVERRIDE not in request.query_params:
            return renderers[0], JSON
        requested = request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        if format_suffix is None and requested is not None \
                and requested not in (formats := [renderer.format for renderer in renderers]):
            raise ValidationError({self.settings.URL_FORMAT_OVERRIDE: [
                f"Unknown format {requested!r}; allowed: {', '.join(formats)}."]})
        return super().select_renderer(request, renderers, format_suffix)

from django.http import HttpResponse
from django.test import RequestFactory

from ralphsite.middleware import AdminMessageMiddleware


def _run(path: str):
    request = RequestFactory().get(path)
    request.session = {}
    AdminMessageMiddleware(lambda r: HttpResponse())(request)
    return request


def test_it_sets_up_messages_for_admin_pages() -> None:
    assert hasattr(_run("/admin/"), "_messages")


def test_it_skips_messages_for_the_api() -> None:
    assert not hasattr(_run("/api/v1/sessions/"), "_messages")


def test_it_adds_a_missing_slash_keeping_the_method_and_body(api) -> None:
    """A 301 made clients that follow it GET the list instead: a 200 that created nothing."""
    response = api.post("/api/v1/sessions?x=1", {"key": "s"}, format="json")
    assert (response.status_code, response["Location"]) == (308, "/api/v1/sessions/?x=1")

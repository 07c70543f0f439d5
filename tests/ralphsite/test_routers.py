"""The API router: `/api/v1/<resource>/…` resolves to its resource's viewset, unknown paths to the JSON 404."""

import re

import pytest
from django.urls import Resolver404, resolve, reverse
from rest_framework.test import APIClient

from ralphsite.api_urls import router

pytestmark = pytest.mark.django_db
ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def test_it_resolves_every_route_of_every_resource_to_its_own_viewset() -> None:
    for prefix, viewset, basename in router.registry:
        for route in router.get_routes(viewset):
            if not router.get_method_map(viewset, route.mapping):
                continue
            name = route.name.format(basename=basename)
            lookup = getattr(viewset, "lookup_url_kwarg", None) or getattr(viewset, "lookup_field", "pk")
            parents = dict.fromkeys(re.findall(r"\(\?P<(\w+)>", prefix), ULID)  # a nested resource's parents
            kwargs = {**parents, **({lookup: ULID} if "{lookup}" in route.url else {})}
            path = reverse(name, kwargs=kwargs or None)
            assert path.startswith("/api/v1/" + re.sub(r"\(\?P<\w+>[^)]*\)", ULID, prefix) + "/"), name
            match = resolve(path)
            assert match.func.cls is viewset and match.url_name == name, path


def test_it_resolves_detail_routes_and_actions_with_their_arguments() -> None:
    match = resolve(f"/api/v1/runs/{ULID}/messages/")
    assert match.url_name == "run-messages" and match.kwargs == {"pk": ULID}
    assert resolve(f"/api/v1/chats/{ULID}/").kwargs == {"pk": ULID}
    assert reverse("run-messages", kwargs={"pk": ULID}) == f"/api/v1/runs/{ULID}/messages/"


def test_it_resolves_the_api_root_and_refuses_unknown_paths() -> None:
    assert resolve("/api/v1/").url_name == "api-root"
    for path in ("/api/v1/no-such-resource/", "/api/v1/chats/not/a/route/", "/api/v1/chats"):
        with pytest.raises(Resolver404):
            resolve(path)


def test_it_answers_an_unknown_resource_with_the_json_404(api: APIClient) -> None:
    response = api.get("/api/v1/no-such-resource/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"

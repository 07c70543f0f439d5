import pytest
import yaml
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_healthz_checks_the_database_without_auth(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_the_openapi_schema_validates_without_warnings(tmp_path) -> None:
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    schema = yaml.safe_load(out.read_text())
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/sessions/" in schema["paths"]


def test_the_schema_endpoint_and_docs_are_served(admin_client: Client) -> None:
    assert admin_client.get("/api/schema/").status_code == 200
    docs = admin_client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()


def test_the_admin_is_branded(admin_client: Client) -> None:
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    assert "Ralph Site" in response.content.decode()


def test_the_front_page_sends_people_to_the_admin(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"


def test_every_admin_page_links_to_the_api_and_its_docs(admin_client: Client) -> None:
    html = admin_client.get("/admin/").content.decode()
    assert 'href="/api/docs/"' in html
    assert 'href="/api/v1/"' in html
    assert "View site" not in html

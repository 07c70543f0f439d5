"""The admin is a `RalphAdminSite` (titles and the dashboard as its index), not a patched default site."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from ralphsite.console.site import RalphAdminSite


def test_it_is_the_site_every_app_registers_on() -> None:
    assert isinstance(admin.site, RalphAdminSite)
    assert admin.site.index.__func__ is RalphAdminSite.index  # no instance attribute patched over it


@pytest.mark.django_db
def test_its_index_is_the_dashboard_under_its_own_titles() -> None:
    user = get_user_model().objects.create_superuser("operator", "operator@example.com", "pw")
    client = Client()
    client.force_login(user)
    response = client.get("/admin/")
    assert response.status_code == 200
    assert response.templates[0].name == "admin/dashboard.html"
    assert "Sessions, conversations and the ledger" in response.content.decode()
    assert response.context_data["dashboard"]["idle_minutes"] > 0  # dashboard_context reaches the page

"""Smoke test for every admin page a person opens: each registered model's changelist and add form.

Models are read from the admin registry, so every model registered later is covered automatically.
"""

import pytest
from django.contrib import admin
from django.test import Client, RequestFactory
from django.urls import reverse

pytestmark = pytest.mark.django_db

MODELS = sorted(admin.site._registry, key=lambda m: m._meta.label)


@pytest.mark.parametrize("model", MODELS, ids=[m._meta.label for m in MODELS])
def test_the_changelist_and_add_pages_render(admin_client: Client, admin_user, model) -> None:
    opts = model._meta
    changelist = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    assert changelist.status_code == 200
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    can_add = admin.site._registry[model].has_add_permission(request)
    add = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add"))
    assert add.status_code == (200 if can_add else 403)

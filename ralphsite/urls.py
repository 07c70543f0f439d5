from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ralphsite.views import healthz

urlpatterns = [
    # People land on the admin; agents call /api/v1/.
    path("", RedirectView.as_view(pattern_name="admin:index"), name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("ralphsite.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

handler404 = "ralphsite.views.not_found"
handler500 = "ralphsite.views.internal_error"

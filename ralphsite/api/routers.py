from rest_framework.routers import DefaultRouter


class RalphRouter(DefaultRouter):
    """Each app builds one of these in its api/urls.py; the project merges their registries."""

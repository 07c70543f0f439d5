"""`/api/v1/`: one router root over every app's resources, and the API's own tokens."""

from conversations_app.api.urls import router as conversations_router
from ledger_app.api.urls import router as ledger_router
from ralphsite.agents.claude_code.views import ClaudeCodeViewSet
from ralphsite.core.api.routers import RalphRouter
from ralphsite.tokens.views import ApiTokenViewSet
from sessions_app.api.urls import router as sessions_router

router = RalphRouter()
for app_router in (sessions_router, conversations_router, ledger_router):
    router.registry.extend(app_router.registry)
router.register("tokens", ApiTokenViewSet, basename="apitoken")
router.register("claude-code", ClaudeCodeViewSet, basename="claude-code")

urlpatterns = router.urls

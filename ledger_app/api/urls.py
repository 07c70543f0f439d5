from ledger_app.api import views
from ralphsite.core.api.routers import RalphRouter

router = RalphRouter()
router.register("events", views.LedgerEventViewSet)
router.register("issues", views.IssueViewSet)
router.register("checkpoints", views.CheckpointViewSet)
router.register("checkpoint-restores", views.CheckpointRestoreViewSet)
router.register("rollbacks", views.RollbackViewSet)
router.register("baselines", views.BaselineViewSet)
router.register("gate-results", views.GateResultViewSet)
router.register("token-usage", views.TokenUsageViewSet)
router.register("model-prices", views.ModelPriceViewSet)
router.register("errors", views.ErrorLogViewSet)
router.register("dead-letters", views.DeadLetterViewSet)
router.register("stats", views.StatsViewSet, basename="stats")

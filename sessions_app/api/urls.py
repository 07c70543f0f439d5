from ralphsite.api.routers import RalphRouter
from sessions_app.api import views

router = RalphRouter()
router.register("sessions", views.SessionViewSet)

# DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004).
router.register("session-state", views.SessionStateEntryViewSet)
router.register("session-phases", views.SessionPhaseViewSet)
router.register("progress-summaries", views.ProgressSummaryViewSet)
router.register("bugs", views.BugViewSet)
router.register("escalations", views.EscalationViewSet)
router.register("acceptance-criteria", views.AcceptanceCriterionViewSet)
router.register("features", views.FeatureViewSet)
router.register("context-budgets", views.ContextBudgetViewSet)
router.register("context-snapshots", views.ContextSnapshotViewSet)
router.register("interviews", views.InterviewViewSet)
router.register("interview-questions", views.InterviewQuestionViewSet)
router.register("loop-runs", views.LoopRunViewSet)

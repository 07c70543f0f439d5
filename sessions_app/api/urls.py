from ralphsite.api.routers import RalphRouter
from sessions_app.api import views

router = RalphRouter()
router.register("sessions", views.SessionViewSet)
# -- orchestration
router.register("iterations", views.IterationViewSet)
router.register("plans", views.PlanViewSet)
router.register("plan-snapshots", views.PlanSnapshotViewSet)
router.register("replanning-deltas", views.ReplanningDeltaViewSet)
router.register("research-sessions", views.ResearchSessionViewSet)
router.register("research-findings", views.ResearchFindingViewSet)
router.register("tasks", views.TaskViewSet)
router.register("task-attempts", views.TaskAttemptViewSet)
router.register("task-files", views.TaskFileViewSet)
router.register("questions", views.QuestionViewSet)
router.register("feedback-batches", views.FeedbackBatchViewSet)
router.register("feedback-items", views.FeedbackItemViewSet)
router.register("feedback-attachments", views.FeedbackAttachmentViewSet)
router.register("signals", views.SignalViewSet)
router.register("agent-invocations", views.AgentInvocationViewSet)

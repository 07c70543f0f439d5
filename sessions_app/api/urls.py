from ralphsite.core.api.routers import PATH_VALUE, RalphRouter
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
# -- orchestration
router.register("iterations", views.IterationViewSet)
router.register("plans", views.PlanViewSet)
router.register("plan-snapshots", views.PlanSnapshotViewSet)
router.register("replanning-deltas", views.ReplanningDeltaViewSet)
router.register("research-sessions", views.ResearchSessionViewSet)
router.register("research-findings", views.ResearchFindingViewSet)
router.register("tasks", views.TaskViewSet)
router.register(rf"sessions/(?P<session>{PATH_VALUE})/tasks", views.SessionTaskViewSet, basename="session-task")
router.register("task-attempts", views.TaskAttemptViewSet)
router.register("task-files", views.TaskFileViewSet)
router.register("questions", views.QuestionViewSet)
router.register(rf"sessions/(?P<session>{PATH_VALUE})/questions", views.SessionQuestionViewSet,
                basename="session-question")
router.register("feedback-batches", views.FeedbackBatchViewSet)
router.register("feedback-items", views.FeedbackItemViewSet)
router.register("feedback-attachments", views.FeedbackAttachmentViewSet)
router.register("signals", views.SignalViewSet)
router.register("agent-invocations", views.AgentInvocationViewSet)

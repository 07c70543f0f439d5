"""Each model's create, update and delete services, read by the API and the admin (`ralphsite.writes`)."""

from ralphsite.writes import Writes
from sessions_app import services
from sessions_app.models import (
    AgentInvocation,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Feature,
    FeedbackAttachment,
    FeedbackBatch,
    Interview,
    InterviewQuestion,
    Iteration,
    Question,
    ResearchFinding,
    Session,
    Signal,
    Task,
    TaskAttempt,
)

WRITES = {
    Session: Writes(create=services.session_create, update=services.session_update, delete=services.session_delete),
    Iteration: Writes(create=services.iteration_create, update=services.iteration_update),
    Task: Writes(create=services.task_create, update=services.task_update, delete=services.task_delete),
    TaskAttempt: Writes(create=services.task_attempt_create, update=services.task_attempt_update,
                        delete=services.task_attempt_delete),
    Question: Writes(create=services.question_create),
    FeedbackBatch: Writes(create=services.feedback_batch_create, update=services.feedback_batch_update),
    FeedbackAttachment: Writes(create=services.feedback_attachment_create,
                               update=services.feedback_attachment_update),
    Signal: Writes(create=services.signal_create),
    AgentInvocation: Writes(create=services.agent_invocation_create, update=services.agent_invocation_update,
                            delete=services.agent_invocation_delete),
    ResearchFinding: Writes(create=services.research_finding_create, update=services.research_finding_update,
                            delete=services.research_finding_delete),
    Bug: Writes(create=services.bug_create, update=services.bug_update),
    Feature: Writes(create=services.feature_create, update=services.feature_update),
    ContextBudget: Writes(create=services.context_budget_create, update=services.context_budget_update),
    ContextSnapshot: Writes(create=services.context_snapshot_create, update=services.context_snapshot_update),
    Interview: Writes(create=services.interview_create, update=services.interview_update),
    InterviewQuestion: Writes(create=services.interview_question_create, update=services.interview_question_update,
                              delete=services.interview_question_delete),
}

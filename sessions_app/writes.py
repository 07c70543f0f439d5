"""Each model's create, update and delete services, read by the API and the admin (`ralphsite.core.writes`)."""

from ralphsite.core.writes import Writes
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
from sessions_app.services.devteam import (
    bug_create,
    bug_update,
    context_budget_create,
    context_budget_update,
    context_snapshot_create,
    context_snapshot_update,
    feature_create,
    feature_update,
    interview_create,
    interview_question_create,
    interview_question_delete,
    interview_question_update,
    interview_update,
    research_finding_create,
    research_finding_delete,
    research_finding_update,
)
from sessions_app.services.questions import (
    feedback_attachment_create,
    feedback_attachment_update,
    feedback_batch_create,
    feedback_batch_update,
    question_create,
    question_update,
    signal_create,
    signal_update,
)
from sessions_app.services.sessions import (
    iteration_create,
    iteration_update,
    session_create,
    session_delete,
    session_update,
)
from sessions_app.services.tasks import (
    task_attempt_delete,
    task_attempt_record,
    task_attempt_update,
    task_create,
    task_delete,
    task_update,
)
from sessions_app.services.usage import agent_invocation_create, agent_invocation_delete, agent_invocation_update

WRITES = {
    Session: Writes(create=session_create, update=session_update, delete=session_delete),
    Iteration: Writes(create=iteration_create, update=iteration_update),
    Task: Writes(create=task_create, update=task_update, delete=task_delete),
    TaskAttempt: Writes(record=task_attempt_record, update=task_attempt_update,
                        delete=task_attempt_delete),
    Question: Writes(create=question_create, update=question_update),
    FeedbackBatch: Writes(create=feedback_batch_create, update=feedback_batch_update),
    FeedbackAttachment: Writes(create=feedback_attachment_create,
                               update=feedback_attachment_update),
    Signal: Writes(create=signal_create, update=signal_update),
    AgentInvocation: Writes(create=agent_invocation_create, update=agent_invocation_update,
                            delete=agent_invocation_delete),
    ResearchFinding: Writes(create=research_finding_create, update=research_finding_update,
                            delete=research_finding_delete),
    Bug: Writes(create=bug_create, update=bug_update),
    Feature: Writes(create=feature_create, update=feature_update),
    ContextBudget: Writes(create=context_budget_create, update=context_budget_update),
    ContextSnapshot: Writes(create=context_snapshot_create, update=context_snapshot_update),
    Interview: Writes(create=interview_create, update=interview_update),
    InterviewQuestion: Writes(create=interview_question_create, update=interview_question_update,
                              delete=interview_question_delete),
}

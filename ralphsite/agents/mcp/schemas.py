"""JSON Schema pieces for the tools' `outputSchema`s (MCP 2025-06-18: a tool that declares one answers
`structuredContent` conforming to it, and clients validate it).

A result is always an object (the spec's structuredContent is one), so a list is answered under a
name (`{"waves": [...]}`). Objects stay open (`additionalProperties` allowed): a field added to a
result later breaks no client that validates against an older list.
"""

from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
BOOLEAN: Schema = {"type": "boolean"}
TIME: Schema = {"type": "string", "format": "date-time"}
# Money is a decimal string (USD, six places or more when the amount has them, `money.usd_text`), as the API
# writes it: no binary float rounds it.
MONEY: Schema = {"type": "string", "pattern": r"^-?\d+(\.\d+)?$"}
ANY: Schema = {}


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def obj(*, required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """An object with these properties; `required` are always present (results drop empty optional fields)."""
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


STRINGS = array(STRING)

ATTEMPT = obj(required=("attempt_number", "status"), attempt_number=INTEGER, status=STRING, agent=STRING,
              model=STRING, review_verdict=STRING, reviewed_at=TIME)
TASK = obj(required=("key", "title", "status"), key=STRING, title=STRING, objective=STRING, description=STRING,
           task_type=STRING, work_type=STRING, status=STRING, status_annotation=STRING, priority=STRING,
           wave=INTEGER, sequence=INTEGER, depends_on=STRINGS, files=STRINGS, success_criteria=STRINGS,
           notes=STRING, assigned_agent=STRING, claimed_by=STRING, lease_expires_at=TIME, iteration_count=INTEGER,
           latest_attempt=ATTEMPT)
TASK_BRIEF = obj(required=("key", "status"), key=STRING, status=STRING, claimed_by=STRING, lease_expires_at=TIME)
QUESTION = obj(required=("key", "category", "status", "text"), key=STRING, category=STRING, priority=STRING,
               status=STRING, text=STRING, impact=STRING, iteration_number=INTEGER, answer=STRING,
               answer_source=STRING, answer_confidence=STRING, answer_implication=STRING)
WAVES = obj(required=("waves",), waves=array(obj(required=("wave", "tasks"), wave=INTEGER, tasks=STRINGS)))
SESSION = obj(required=("id", "state", "status", "current_iteration"), id=STRING, key=STRING, user_request=STRING,
              state=STRING, status=STRING, current_iteration=INTEGER, current_wave=INTEGER, current_phase=STRING,
              default_model=STRING, max_concurrency=INTEGER, project_path=STRING, exit_reason=STRING,
              summary=STRING, started_at=TIME, ended_at=TIME, total_tokens_input=INTEGER,
              total_tokens_output=INTEGER, total_cost_usd=MONEY)
ITERATION = obj(required=("number", "planning_complete"), number=INTEGER, planning_complete=BOOLEAN,
                planning_completed_at=TIME, tasks_defined=INTEGER, review_content=STRING, started_at=TIME,
                completed_at=TIME)
FEEDBACK_ITEM = obj(required=("issue_key", "severity", "description", "is_resolved"), issue_key=STRING,
                    severity=STRING, description=STRING, evidence=STRING, suggested_fix=STRING, is_resolved=BOOLEAN,
                    resolved_at=TIME)
FEEDBACK_BATCH = obj(required=("iteration", "batch", "items", "attachments"), iteration=INTEGER, batch=STRING,
                     summary=STRING, items=array(FEEDBACK_ITEM), attachments=STRINGS)
INVOCATION = obj(required=("id", "status"), id=STRING, role=STRING, agent=STRING, mode=STRING, model=STRING,
                 task_key=STRING, status=STRING, tokens_input=INTEGER, tokens_output=INTEGER, cost_usd=MONEY,
                 is_estimated=BOOLEAN, duration_ms=INTEGER, started_at=TIME, completed_at=TIME)

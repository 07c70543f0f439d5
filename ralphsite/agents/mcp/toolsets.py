"""Smaller tool sets, so an agent's context carries only what its role uses: `/mcp/?tools=executor`.

Every tool's schema is in the context of every model call an agent makes; the whole table is ~30 KB.
A role's set is what that agent of a Ralph V2 loop calls (seed 000's "Used By" column, plus the
loop's verbs it needs); `core` is seed 000's session tools; `memory` is seed 004's. Sets combine:
`?tools=executor,memory`. docs/agents.md gives each set's size.
"""

from ralphsite.agents.mcp.protocol import INVALID_REQUEST, RpcError

# Seed 000's SessionTools (GetPlan … PollSignal): what every agent of the seed had.
CORE = frozenset({"get_plan", "update_plan", "get_task", "create_task", "update_task_status", "get_progress",
                  "submit_report", "submit_review", "get_questions", "create_question", "answer_question",
                  "get_feedback", "create_signal", "poll_signal"})
MEMORY = frozenset({"search_memory", "record_observation", "record_pattern"})

TOOL_SETS: dict[str, frozenset[str]] = {
    "core": CORE,
    # The orchestrator drives the session: its state, iterations, waves, invocations, feedback and signals.
    "orchestrator": frozenset({
        "create_session", "get_session", "transition_session", "finish_session", "update_iteration",
        "get_progress", "get_waves", "store_waves", "update_task_status", "get_feedback", "create_feedback",
        "start_invocation", "complete_invocation", "poll_signal", "create_signal", "get_state", "set_state",
        "append_event", "add_token_usage"}),
    # The planner writes the plan and the tasks, and replans from feedback.
    "planner": frozenset({
        "get_session", "get_plan", "update_plan", "create_task", "get_task", "get_progress", "get_waves",
        "get_questions", "get_feedback", "resolve_feedback", "record_replanning", "search_memory"}),
    # The questioner asks and answers the planning questions.
    "questioner": frozenset({"get_plan", "get_questions", "create_question", "answer_question", "get_feedback",
                             "search_memory", "record_observation"}),
    # An executor claims a task, works under its lease and leaves a report (the attempt) for review.
    "executor": frozenset({
        "claim_task", "get_task", "heartbeat_task", "release_task", "submit_report", "update_task_status",
        "get_plan", "get_questions", "create_question", "record_issue", "create_checkpoint", "append_event",
        "add_token_usage", "record_observation", "search_memory"}),
    # A reviewer reads the report and gives the verdict that completes the task or sends it back.
    "reviewer": frozenset({
        "get_task", "get_progress", "submit_review", "get_plan", "get_feedback", "record_issue", "append_event",
        "add_token_usage", "record_observation", "search_memory"}),
    "memory": MEMORY,
}


def requested_tools(value: str | None) -> frozenset[str] | None:
    """The tool names `?tools=` asks for (a comma-separated union of sets), None for every tool; an unknown
    set is refused (400) naming the known ones."""
    if value is None or value.strip() in ("", "all"):
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in TOOL_SETS]
    if unknown:
        raise RpcError(INVALID_REQUEST, f"Unknown tool set {', '.join(unknown)}: ?tools= takes "
                       f"{', '.join(TOOL_SETS)} or all (comma-separated to combine).",
                       data={"unknown": unknown, "known": [*TOOL_SETS, "all"]}, status=400)
    return frozenset().union(*(TOOL_SETS[name] for name in names))

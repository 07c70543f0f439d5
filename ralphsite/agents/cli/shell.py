"""`ralph shell-init bash`: DevTeam's `scripts/state.sh` functions (seed 003) on top of `ralph`.

The functions have DevTeam's names, arguments and defaults; each is one or two `ralph` calls, so the
REST API does the work (docs/agents.md lists them). They call the `ralph` that printed them, by its
absolute path, so `eval "$(.venv/bin/ralph shell-init bash)"` works without the venv on PATH.

Which session they act on: a trailing argument names one, as in DevTeam; otherwise `ralph` finds it
(RALPH_SESSION, then the project's `.ralph/session` that `ralph session start` wrote: see `project`),
so a hook script or a subshell of the project finds the session a `start_session` began
(`SESSION_ID=$(start_session …)` runs in a subshell, which cannot export anything).

`get_state FIELD` and `set_state FIELD VALUE` read and write DevTeam's session columns (`ralph session
get|set`); any other name is a key of the session's key/value state (`ralph state`), as it was before
the columns were served (DevTeam refused other names).
"""

import shlex

from ralphsite.agents.cli.devteam import SESSION_FIELDS

BASH = r"""# ralph shell-init bash: DevTeam's scripts/state.sh functions (seed 003) over Ralph Site's API
_RALPH=__RALPH__
# _ralph_on SESSION ARGS…: ralph on SESSION when one is named, else on the session ralph finds
_ralph_on() {
    local session="$1"; shift
    if [ -n "$session" ]; then "$_RALPH" --session "$session" "$@"; else "$_RALPH" "$@"; fi
}
# Nothing there (ralph's exit 3: an unset key, no session) prints nothing and succeeds, as DevTeam's SELECT did.
_ralph_or_nothing() {
    "$@"
    local status=$?
    [ "$status" -eq 3 ] && return 0
    return "$status"
}

# -- session management
start_session() {  # command command_type [execution_mode]
    local id
    id=$("$_RALPH" session start "$1" "$2" --execution-mode "${3:-normal}" --phase initializing) || return
    export RALPH_SESSION="$id"
    printf '%s\n' "$id"
}
end_session() {  # [status] [exit_reason] [session]
    _ralph_on "${3:-}" session end "${1:-completed}" "${2:-Success}" || return
    if [ -z "${3:-}" ]; then unset RALPH_SESSION; fi
}
abort_session() { end_session aborted "${1:-User aborted}"; }
get_current_session_id() { _ralph_or_nothing "$_RALPH" session current 2> /dev/null; }
is_session_running() { [ "$(_ralph_or_nothing "$_RALPH" session get status 2> /dev/null)" = "running" ]; }
get_session_json() { _ralph_on "${1:-}" session show; }

# -- state: DevTeam's session columns, other names in the key/value state
get_state() {  # field [session]
    case "$1" in
        __FIELDS__) _ralph_or_nothing _ralph_on "${2:-}" session get "$1" ;;
        *) _ralph_or_nothing _ralph_on "${2:-}" state get "$1" ;;
    esac
}
set_state() {  # field value [session]
    case "$1" in
        __FIELDS__) _ralph_on "${3:-}" session set "$1" "$2" ;;
        *) _ralph_on "${3:-}" state set "$1" "$2" ;;
    esac
}
get_current_phase() { get_state current_phase; }
get_current_agent() { get_state current_agent; }
get_current_model() { get_state current_model; }
# A count DevTeam read as 0 when no session answered.
_ralph_count() { local value; value=$(get_state "$1") || return; printf '%s\n' "${value:-0}"; }
get_current_iteration() { _ralph_count current_iteration; }
get_consecutive_failures() { _ralph_count consecutive_failures; }
get_execution_mode() { get_state execution_mode; }
is_eco_mode() { [ "$(get_execution_mode)" = "eco" ]; }
is_bug_council_active() { [ "$(get_state bug_council_activated)" = "1" ]; }
set_phase() { set_state current_phase "$1"; }
set_current_agent() {
    if [ -z "${1:-}" ]; then echo "ralph: usage: the agent's name cannot be empty" >&2; return 1; fi
    set_state current_agent "$1"
}
set_current_model() { set_state current_model "$1"; }
increment_iteration() { _ralph_on "${1:-}" session bump current_iteration > /dev/null; }
increment_failures() { _ralph_on "${1:-}" session bump consecutive_failures > /dev/null; }
reset_failures() { _ralph_on "${1:-}" session set consecutive_failures 0; }
activate_bug_council() {  # reason [session]
    if [ -z "${1:-}" ]; then echo "ralph: usage: the bug council's reason cannot be empty" >&2; return 1; fi
    _ralph_on "${2:-}" session set bug_council_activated 1 bug_council_reason "$1"
}

# -- key/value state
set_kv_state() { _ralph_on "${3:-}" state set "$1" "$2"; }
get_kv_state() { _ralph_or_nothing _ralph_on "${2:-}" state get "$1"; }
delete_kv_state() { _ralph_on "${2:-}" state delete "$1"; }

# -- cost
add_tokens() { _ralph_on "${4:-}" tokens add "$1" "$2" "$3"; }  # tokens_input tokens_output cost_cents [session]
get_total_cost_dollars() { _ralph_on "${1:-}" session get total_cost_dollars; }

# -- circuit breaker
CIRCUIT_BREAKER_DEFAULT_THRESHOLD="${DEVTEAM_CIRCUIT_BREAKER_THRESHOLD:-5}"
should_trip_circuit_breaker() {
    local failures max_failures
    failures=$(get_consecutive_failures) || return 2
    max_failures=$(get_state max_consecutive_failures) || return 2
    [ "${failures:-0}" -ge "${max_failures:-$CIRCUIT_BREAKER_DEFAULT_THRESHOLD}" ]
}
trip_circuit_breaker() { set_state circuit_breaker_state open; }
reset_circuit_breaker() { "$_RALPH" session set circuit_breaker_state closed consecutive_failures 0; }

# -- model escalation
get_next_model() {
    case "$1" in haiku) echo sonnet ;; sonnet) echo opus ;; opus|bug_council) echo bug_council ;; *) echo sonnet ;; esac
}
get_previous_model() {
    case "$1" in opus) echo sonnet ;; sonnet) echo haiku ;; bug_council) echo opus ;; *) echo haiku ;; esac
}
record_escalation() {  # from_model to_model reason [agent] [session]
    _ralph_on "${5:-}" escalation record "$1" "$2" "$3" --agent "${4:-}"
}

# -- plan
set_active_plan() {  # plan_id [session]
    if [ -z "${1:-}" ]; then echo "ralph: usage: the plan id cannot be empty" >&2; return 1; fi
    set_state plan_id "$1" "${2:-}"
}
set_active_sprint() {  # sprint_id [session]
    if [ -z "${1:-}" ]; then echo "ralph: usage: the sprint id cannot be empty" >&2; return 1; fi
    set_state sprint_id "$1" "${2:-}"
}

# -- views
get_session_summary() { _ralph_on "${1:-}" stats session-summary; }
get_model_usage() { _ralph_on "${1:-}" stats model-usage --table; }
is_max_iterations_reached() {
    local current max
    current=$(get_current_iteration) || return 2
    max=$(get_state max_iterations) || return 2
    [ "${current:-0}" -ge "${max:-10}" ]
}
"""

SHELLS = {"bash": BASH}


def shell_script(shell: str, *, ralph: str) -> str:
    """The functions for `shell`, calling the `ralph` at `ralph` (an absolute path)."""
    return SHELLS[shell].replace("__RALPH__", shlex.quote(ralph)).replace("__FIELDS__", "|".join(SESSION_FIELDS))

"""`ralph shell-init bash`: DevTeam's `scripts/state.sh` functions (seed 003) on top of `ralph`.

`SESSION_ID=$(start_session …)` runs start_session in a subshell, which cannot export anything to
the calling shell; DevTeam found "the current session" in its database instead. Here start_session
writes the id to a file owned by the shell that ran `eval "$(ralph shell-init bash)"` (its `$$`,
which subshells share), and the other functions read it back; RALPH_SESSION is used when no
session was started this way. A trailing argument names a session explicitly, as in DevTeam.
"""

BASH = r"""# ralph shell-init bash: start_session, set_state, get_state, add_tokens, end_session
_RALPH_SESSION_FILE="${RALPH_SESSION_FILE:-${TMPDIR:-/tmp}/ralph-session-$$}"
_ralph_session() {
    if [ -n "${1:-}" ]; then printf '%s' "$1"
    elif [ -s "$_RALPH_SESSION_FILE" ]; then cat "$_RALPH_SESSION_FILE"
    else printf '%s' "${RALPH_SESSION:-}"; fi
}
start_session() {
    local id
    id=$(ralph session start "$1" "$2") || return
    (umask 077 && printf '%s\n' "$id" > "$_RALPH_SESSION_FILE") || return
    export RALPH_SESSION="$id"
    printf '%s\n' "$id"
}
set_state() {
    ralph --session "$(_ralph_session "${3:-}")" state set "$1" "$2"
}
get_state() {
    # An unset key prints nothing, as DevTeam's SELECT did (ralph exits 3 for it).
    ralph --session "$(_ralph_session "${2:-}")" state get "$1"
    local status=$?
    [ "$status" -eq 3 ] && return 0
    return "$status"
}
add_tokens() {
    ralph --session "$(_ralph_session "${4:-}")" tokens add "$1" "$2" "$3"
}
end_session() {
    ralph --session "$(_ralph_session "${3:-}")" session end "$1" "${2:-}" || return
    if [ -z "${3:-}" ]; then rm -f "$_RALPH_SESSION_FILE"; unset RALPH_SESSION; fi
}
"""

SHELLS = {"bash": BASH}

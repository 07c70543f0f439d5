-- DevTeam's schema (v4, tables and views), verbatim from seed 003.

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    started_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    ended_at TIMESTAMP,
    command TEXT NOT NULL,                      -- "/devteam:implement --sprint 1"
    command_type TEXT NOT NULL,                 -- plan, implement, bug, issue
    status TEXT DEFAULT 'running',              -- running, completed, failed, aborted
    exit_reason TEXT,                           -- Success, user_abort, max_iterations, error
    current_phase TEXT,                         -- interview, research, planning, executing, quality_gates
    current_task_id TEXT,
    current_agent TEXT,
    current_model TEXT,                         -- haiku, sonnet, opus
    current_iteration INTEGER DEFAULT 0,
    max_iterations INTEGER DEFAULT 10,
    consecutive_failures INTEGER DEFAULT 0,
    max_consecutive_failures INTEGER DEFAULT 5,
    circuit_breaker_state TEXT DEFAULT 'closed', -- closed, open, half-open
    plan_id TEXT,
    sprint_id TEXT,
    execution_mode TEXT DEFAULT 'normal',       -- normal, eco
    total_tokens_input INTEGER DEFAULT 0,
    total_tokens_output INTEGER DEFAULT 0,
    total_cost_cents INTEGER DEFAULT 0,
    bug_council_activated BOOLEAN DEFAULT FALSE,
    bug_council_reason TEXT
);

CREATE TABLE session_state (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value JSON NOT NULL,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (session_id, key)
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    event_type TEXT NOT NULL,
    event_category TEXT,                    -- agent, gate, escalation, interview, etc.
    agent TEXT,
    model TEXT,
    iteration INTEGER,
    phase TEXT,
    data JSON,
    metadata JSON,
    message TEXT,
    tokens_input INTEGER,
    tokens_output INTEGER,
    cost_cents INTEGER
);

CREATE TABLE agent_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    agent TEXT NOT NULL,                    -- e.g., 'api-developer-typescript'
    agent_type TEXT,                        -- orchestration, backend, frontend, etc.
    model TEXT NOT NULL,
    started_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    ended_at TIMESTAMP,
    duration_seconds INTEGER,
    status TEXT,                            -- running, success, failed, escalated
    error_message TEXT,
    error_type TEXT,                        -- test_failure, type_error, lint_error, etc.
    task_id TEXT,
    iteration INTEGER,
    attempt INTEGER DEFAULT 1,
    tokens_input INTEGER,
    tokens_output INTEGER,
    cost_cents INTEGER,
    files_changed JSON,                    -- ["src/foo.ts", "src/bar.ts"]
    output_summary TEXT
);

CREATE TABLE gate_results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    gate TEXT NOT NULL,                    -- tests, lint, typecheck, security, coverage
    iteration INTEGER NOT NULL,
    passed BOOLEAN NOT NULL,
    details JSON,
    error_count INTEGER,
    warning_count INTEGER,
    coverage_percent REAL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    duration_seconds INTEGER
);

CREATE TABLE interviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    interview_type TEXT NOT NULL,           -- feature, bug, issue, task
    started_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    completed_at TIMESTAMP,
    status TEXT DEFAULT 'in_progress',      -- in_progress, completed, skipped
    questions_asked INTEGER DEFAULT 0,
    questions_answered INTEGER DEFAULT 0
);

CREATE TABLE interview_questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    interview_id INTEGER NOT NULL REFERENCES interviews(id) ON DELETE CASCADE,
    question_key TEXT NOT NULL,             -- expected_behavior, repro_steps, etc.
    question_text TEXT NOT NULL,
    question_type TEXT DEFAULT 'text',      -- text, choice, confirm
    response TEXT,
    responded_at TIMESTAMP,
    sequence INTEGER NOT NULL,
    required BOOLEAN DEFAULT TRUE
);

CREATE TABLE research_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    completed_at TIMESTAMP,
    status TEXT DEFAULT 'in_progress',
    findings_count INTEGER DEFAULT 0,
    recommendations_count INTEGER DEFAULT 0,
    blockers_found INTEGER DEFAULT 0
);

CREATE TABLE research_findings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    research_session_id INTEGER NOT NULL REFERENCES research_sessions(id) ON DELETE CASCADE,
    finding_type TEXT NOT NULL,             -- pattern, technology, blocker, recommendation
    title TEXT NOT NULL,
    description TEXT,
    source TEXT,                            -- codebase, documentation, web
    file_path TEXT,
    evidence JSON,
    priority TEXT DEFAULT 'medium',         -- high, medium, low
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE bugs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    severity TEXT,                          -- critical, high, medium, low
    complexity TEXT,                        -- simple, moderate, complex
    root_cause TEXT,
    diagnosis_method TEXT,                  -- direct, bug_council
    fix_summary TEXT,
    files_changed JSON,
    prevention_measures TEXT,
    status TEXT DEFAULT 'open',             -- open, in_progress, resolved, wont_fix
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    resolved_at TIMESTAMP,
    council_activated BOOLEAN DEFAULT FALSE,
    council_votes JSON
);

CREATE TABLE plans (
    id TEXT PRIMARY KEY,                   -- plan-001, plan-002
    name TEXT NOT NULL,
    description TEXT,
    plan_type TEXT,                         -- feature, project, maintenance
    prd_path TEXT,
    tasks_path TEXT,
    sprints_path TEXT,
    status TEXT DEFAULT 'draft',            -- draft, ready, in_progress, completed, archived
    total_sprints INTEGER DEFAULT 0,
    completed_sprints INTEGER DEFAULT 0,
    total_tasks INTEGER DEFAULT 0,
    completed_tasks INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    started_at TIMESTAMP,
    completed_at TIMESTAMP,
    research_session_id INTEGER REFERENCES research_sessions(id) ON DELETE SET NULL
);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,                          -- TASK-001, sprint-1-task-3, etc.
    name TEXT NOT NULL,
    description TEXT,
    task_type TEXT,                               -- feature, bugfix, refactor, test, docs
    plan_id TEXT REFERENCES plans(id) ON DELETE SET NULL,
    sprint_id TEXT,
    parent_task_id TEXT,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    status TEXT DEFAULT 'pending',                -- pending, in_progress, completed, failed, blocked
    scope_files TEXT,                             -- Comma-separated allowed file patterns
    scope_json JSON,                             -- Full scope definition as JSON
    assigned_agent TEXT,
    assigned_model TEXT,
    priority TEXT DEFAULT 'medium',               -- critical, high, medium, low
    sequence INTEGER DEFAULT 0,
    depends_on JSON,                             -- Array of task IDs this depends on
    blocks JSON,                                 -- Array of task IDs this blocks
    estimated_effort TEXT,                        -- small, medium, large, xl
    actual_iterations INTEGER DEFAULT 0,
    files_changed JSON,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    started_at TIMESTAMP,
    completed_at TIMESTAMP,
    result_summary TEXT,
    error_message TEXT,
    commit_sha TEXT
);

CREATE TABLE task_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    attempt_number INTEGER NOT NULL,
    model TEXT,
    agent TEXT,
    started_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    ended_at TIMESTAMP,
    duration_seconds INTEGER,
    status TEXT,                                  -- success, failed, escalated
    error_type TEXT,
    error_message TEXT,
    tokens_input INTEGER,
    tokens_output INTEGER,
    cost_cents INTEGER
);

CREATE TABLE task_files (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    file_path TEXT NOT NULL,
    file_type TEXT,                               -- source, test, config, docs
    access_type TEXT DEFAULT 'allowed',           -- allowed, forbidden, read_only
    is_pattern BOOLEAN DEFAULT FALSE,
    UNIQUE(task_id, file_path)
);

CREATE TABLE escalations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    from_model TEXT NOT NULL,
    to_model TEXT NOT NULL,
    agent TEXT,
    reason TEXT NOT NULL,                  -- consecutive_failures, complexity_increase, etc.
    failure_count INTEGER,
    iteration INTEGER,
    task_id TEXT,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE acceptance_criteria (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT,
    sprint_id TEXT,
    plan_id TEXT,
    criterion_id TEXT NOT NULL,            -- AC-001, AC-002, etc.
    description TEXT NOT NULL,
    category TEXT,                         -- functional, visual, performance, security
    passes BOOLEAN NOT NULL DEFAULT FALSE,
    verified_at TIMESTAMP,
    verified_by TEXT,
    verification_method TEXT,              -- automated_test, manual, visual
    verification_evidence TEXT,
    last_failure_reason TEXT,
    failure_count INTEGER DEFAULT 0,
    priority TEXT DEFAULT 'medium',        -- critical, high, medium, low
    sequence INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    UNIQUE(plan_id, criterion_id)
);

CREATE TABLE features (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id TEXT,
    sprint_id TEXT,
    feature_id TEXT NOT NULL UNIQUE,       -- FEAT-001, FEAT-002
    name TEXT NOT NULL,
    description TEXT,
    category TEXT,                         -- auth, ui, api, data, etc.
    steps JSON,                            -- [{"step": "click button", "passes": false}, ...]
    passes BOOLEAN NOT NULL DEFAULT FALSE,
    all_steps_pass BOOLEAN DEFAULT FALSE,
    steps_total INTEGER DEFAULT 0,
    steps_passed INTEGER DEFAULT 0,
    verified_at TIMESTAMP,
    verified_by TEXT,
    priority TEXT DEFAULT 'medium',
    sequence INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE context_snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    snapshot_type TEXT NOT NULL,            -- auto, checkpoint, overflow_prevention
    tokens_before INTEGER,
    tokens_after INTEGER,
    tokens_saved INTEGER,
    preserved_items JSON,
    summarized_items JSON,
    summary_text TEXT,
    trigger_reason TEXT,                   -- approaching_limit, iteration_complete, phase_change
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE context_budgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    context_limit INTEGER NOT NULL,
    current_usage INTEGER DEFAULT 0,
    usage_percent REAL DEFAULT 0.0,
    warn_threshold INTEGER NOT NULL DEFAULT 0,
    summarize_threshold INTEGER NOT NULL DEFAULT 0,
    status TEXT DEFAULT 'ok',              -- ok, warning, critical
    last_action TEXT,                      -- none, warned, summarized
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE progress_summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    summary_text TEXT NOT NULL,
    from_iteration INTEGER,
    to_iteration INTEGER,
    tasks_completed INTEGER DEFAULT 0,
    tasks_remaining INTEGER DEFAULT 0,
    tests_passing INTEGER DEFAULT 0,
    tests_failing INTEGER DEFAULT 0,
    features_passing INTEGER DEFAULT 0,
    features_total INTEGER DEFAULT 0,
    last_commit_sha TEXT,
    files_changed JSON,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE session_phases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    phase_type TEXT NOT NULL,              -- initializer, coding, resume
    is_first_run BOOLEAN DEFAULT FALSE,
    init_script_created BOOLEAN DEFAULT FALSE,
    features_enumerated BOOLEAN DEFAULT FALSE,
    progress_file_created BOOLEAN DEFAULT FALSE,
    baseline_commit_sha TEXT,
    features_attempted INTEGER DEFAULT 0,
    features_completed INTEGER DEFAULT 0,
    resumed_from_session TEXT,
    resume_point TEXT,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE baselines (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tag_name TEXT NOT NULL UNIQUE,             -- baseline/sprint-01/20250201-120000
    commit_hash TEXT NOT NULL,
    milestone TEXT NOT NULL,                   -- sprint-start, feature-complete, etc.
    description TEXT,
    branch TEXT,
    files_changed INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    checkpoint_id TEXT NOT NULL UNIQUE,        -- chkpt-20250201-120000-abc123
    path TEXT NOT NULL,                        -- .devteam/checkpoints/chkpt-xxx
    description TEXT,
    git_commit TEXT,
    session_id TEXT,
    task_id TEXT,
    sprint_id TEXT,
    can_restore BOOLEAN DEFAULT TRUE,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE checkpoint_restores (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints(checkpoint_id) ON DELETE CASCADE,
    restored_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE rollbacks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rollback_type TEXT NOT NULL,               -- auto, manual, smart
    target_commit TEXT NOT NULL,
    target_tag TEXT,
    reason TEXT,
    from_commit TEXT,
    trigger_type TEXT,                         -- regression, user_request, error
    check_type TEXT,                           -- build, test, typecheck, lint
    backup_branch TEXT,
    rolled_back_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE token_usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT,
    task_id TEXT,
    sprint_id TEXT,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    operation TEXT,                            -- code-gen, test, review, etc.
    agent_name TEXT,
    recorded_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE error_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT,
    task_id TEXT,
    operation TEXT,
    error_type TEXT NOT NULL,                  -- transient, permanent, recoverable
    error_message TEXT NOT NULL,
    error_pattern TEXT,                        -- Matched pattern from error-recovery.yaml
    recovery_action TEXT,
    recovery_success BOOLEAN,
    retry_count INTEGER DEFAULT 0,
    circuit_opened BOOLEAN DEFAULT FALSE,
    logged_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE dead_letter (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    operation_type TEXT NOT NULL,
    operation_params JSON,
    error_message TEXT,
    stack_trace TEXT,
    attempt_count INTEGER DEFAULT 1,
    session_id TEXT,
    task_id TEXT,
    status TEXT DEFAULT 'pending',             -- pending, retried, failed, expired
    retry_after TIMESTAMP,
    expires_at TIMESTAMP,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE VIEW v_current_session AS
SELECT * FROM sessions WHERE status = 'running' ORDER BY started_at DESC LIMIT 1;

CREATE VIEW v_session_summary AS
SELECT
    s.id, s.command, s.status, s.started_at, s.ended_at,
    s.current_phase, s.current_agent, s.current_model,
    s.current_iteration, s.execution_mode,
    s.total_tokens_input + s.total_tokens_output as total_tokens,
    ROUND(s.total_cost_cents / 100.0, 2) as total_cost_dollars,
    (SELECT COUNT(*) FROM agent_runs ar WHERE ar.session_id = s.id) as agent_runs,
    (SELECT COUNT(*) FROM escalations e WHERE e.session_id = s.id) as escalations,
    s.bug_council_activated
FROM sessions s;

CREATE VIEW v_model_usage AS
SELECT
    session_id, model,
    COUNT(*) as runs,
    SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) as successes,
    SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) as failures,
    ROUND(AVG(CASE WHEN status = 'success' THEN 1.0 ELSE 0.0 END) * 100, 1) as success_rate,
    SUM(tokens_input) as tokens_input,
    SUM(tokens_output) as tokens_output,
    SUM(cost_cents) as cost_cents
FROM agent_runs
GROUP BY session_id, model;

CREATE VIEW v_agent_performance AS
SELECT
    agent,
    COUNT(*) as total_runs,
    SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) as successes,
    ROUND(AVG(CASE WHEN status = 'success' THEN 1.0 ELSE 0.0 END) * 100, 1) as success_rate,
    AVG(duration_seconds) as avg_duration_seconds,
    SUM(cost_cents) as total_cost_cents
FROM agent_runs
GROUP BY agent;

CREATE VIEW v_current_task AS
SELECT * FROM tasks WHERE status = 'in_progress' ORDER BY started_at DESC LIMIT 1;

CREATE VIEW v_sprint_progress AS
SELECT
    sprint_id,
    COUNT(*) as total_tasks,
    SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) as completed,
    SUM(CASE WHEN status = 'in_progress' THEN 1 ELSE 0 END) as in_progress,
    SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) as failed,
    SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) as pending,
    ROUND(AVG(CASE WHEN status = 'completed' THEN 1.0 ELSE 0.0 END) * 100, 1) as completion_rate
FROM tasks
WHERE sprint_id IS NOT NULL
GROUP BY sprint_id;

CREATE VIEW v_task_attempts_summary AS
SELECT
    task_id,
    COUNT(*) as total_attempts,
    SUM(CASE WHEN status = 'success' THEN 1 ELSE 0 END) as successes,
    SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) as failures,
    MAX(attempt_number) as last_attempt,
    SUM(tokens_input + tokens_output) as total_tokens,
    SUM(cost_cents) as total_cost_cents
FROM task_attempts
GROUP BY task_id;

CREATE VIEW v_gate_pass_rates AS
SELECT
    gate,
    COUNT(*) as total_runs,
    SUM(CASE WHEN passed THEN 1 ELSE 0 END) as passes,
    ROUND(AVG(CASE WHEN passed THEN 1.0 ELSE 0.0 END) * 100, 1) as pass_rate
FROM gate_results
GROUP BY gate;

CREATE VIEW v_acceptance_criteria_status AS
SELECT
    task_id,
    COUNT(*) as total_criteria,
    SUM(CASE WHEN passes THEN 1 ELSE 0 END) as passing,
    SUM(CASE WHEN NOT passes THEN 1 ELSE 0 END) as failing,
    ROUND(AVG(CASE WHEN passes THEN 1.0 ELSE 0.0 END) * 100, 1) as pass_rate
FROM acceptance_criteria
GROUP BY task_id;

CREATE VIEW v_feature_status AS
SELECT
    plan_id,
    COUNT(*) as total_features,
    SUM(CASE WHEN passes THEN 1 ELSE 0 END) as passing,
    SUM(CASE WHEN NOT passes THEN 1 ELSE 0 END) as failing,
    SUM(steps_total) as total_steps,
    SUM(steps_passed) as steps_passed,
    ROUND(AVG(CASE WHEN passes THEN 1.0 ELSE 0.0 END) * 100, 1) as feature_pass_rate
FROM features
GROUP BY plan_id;

CREATE VIEW v_context_status AS
SELECT
    cb.session_id, cb.model, cb.context_limit,
    cb.current_usage, cb.usage_percent, cb.status,
    (SELECT COUNT(*) FROM context_snapshots cs
     WHERE cs.session_id = cb.session_id) as snapshots_created
FROM context_budgets cb;

CREATE VIEW v_session_cost AS
SELECT
    session_id,
    COUNT(*) as api_calls,
    SUM(input_tokens) as total_input_tokens,
    SUM(output_tokens) as total_output_tokens,
    SUM(input_tokens + output_tokens) as total_tokens,
    ROUND(SUM(cost_usd), 4) as total_cost_usd,
    MIN(recorded_at) as first_call,
    MAX(recorded_at) as last_call
FROM token_usage
GROUP BY session_id;

CREATE VIEW v_daily_cost AS
SELECT
    date(recorded_at) as date,
    COUNT(*) as api_calls,
    SUM(input_tokens + output_tokens) as total_tokens,
    ROUND(SUM(cost_usd), 4) as total_cost_usd
FROM token_usage
GROUP BY date(recorded_at);

CREATE VIEW v_error_summary AS
SELECT
    error_type,
    COUNT(*) as occurrences,
    SUM(CASE WHEN recovery_success THEN 1 ELSE 0 END) as recovered,
    SUM(CASE WHEN circuit_opened THEN 1 ELSE 0 END) as circuits_opened
FROM error_log
GROUP BY error_type;

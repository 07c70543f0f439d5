-- ralphy's schema, verbatim from seed 001.

-- Runs table
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,  -- 'running' | 'completed' | 'failed' | 'stopped'
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  config_json TEXT NOT NULL
);

-- Tasks table
CREATE TABLE tasks (
  run_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  status TEXT NOT NULL,  -- 'pending' | 'running' | 'done' | 'failed' | 'skipped'
  iter_count INTEGER DEFAULT 0,
  started_at INTEGER,
  ended_at INTEGER,
  last_phase TEXT,
  PRIMARY KEY (run_id, task_id),
  FOREIGN KEY (run_id) REFERENCES runs(id)
);

-- Ledger table (append-only)
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  task_id TEXT,
  phase TEXT,
  duration_ms INTEGER,
  tokens_in INTEGER,
  tokens_out INTEGER,
  tokens_total INTEGER,
  cost_usd REAL,
  is_estimated INTEGER,
  meta_json TEXT,
  FOREIGN KEY (run_id) REFERENCES runs(id)
);

-- Issues table
CREATE TABLE issues (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  signature TEXT NOT NULL,
  message TEXT NOT NULL,
  file TEXT,
  line INTEGER,
  ts INTEGER NOT NULL,
  count INTEGER DEFAULT 1,
  FOREIGN KEY (run_id) REFERENCES runs(id),
  UNIQUE (run_id, signature)
);

-- Checkpoints table
CREATE TABLE checkpoints (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  git_ref TEXT NOT NULL,
  summary TEXT,
  ts INTEGER NOT NULL,
  FOREIGN KEY (run_id) REFERENCES runs(id)
);

-- Indexes
CREATE INDEX idx_ledger_run_id ON ledger(run_id);
CREATE INDEX idx_ledger_ts ON ledger(ts);
CREATE INDEX idx_issues_signature ON issues(signature);

-- ralph-mem's schema, verbatim from seed 004 (Storage Schema): memory.db and global.db.

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  project_path TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  summary TEXT,
  summary_embedding BLOB,
  token_count INTEGER DEFAULT 0
);

CREATE INDEX idx_sessions_project ON sessions(project_path);
CREATE INDEX idx_sessions_started ON sessions(started_at);

CREATE TABLE observations (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  type TEXT NOT NULL,           -- 'tool_use' | 'bash' | 'error' | 'success'
  tool_name TEXT,
  content TEXT NOT NULL,
  content_compressed TEXT,      -- 압축된 버전
  embedding BLOB,
  importance REAL DEFAULT 0.5,
  created_at TEXT NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);

CREATE INDEX idx_obs_session ON observations(session_id);
CREATE INDEX idx_obs_type ON observations(type);
CREATE INDEX idx_obs_created ON observations(created_at);

CREATE VIRTUAL TABLE observations_fts USING fts5(
  content,
  tool_name,
  content='observations',
  content_rowid='rowid',
  tokenize='unicode61 remove_diacritics 2'
);

-- 트리거: observations 변경 시 FTS 동기화
CREATE TRIGGER obs_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observations_fts(rowid, content, tool_name)
  VALUES (new.rowid, new.content, new.tool_name);
END;

CREATE TABLE loop_runs (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  task TEXT NOT NULL,
  criteria TEXT NOT NULL,       -- JSON: 성공 기준
  status TEXT NOT NULL,         -- 'running' | 'success' | 'failed' | 'stopped'
  iterations INTEGER DEFAULT 0,
  max_iterations INTEGER DEFAULT 10,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  snapshot_path TEXT,           -- 스냅샷 디렉토리
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);

CREATE TABLE global_patterns (
  id TEXT PRIMARY KEY,
  pattern_type TEXT NOT NULL,   -- 'error_fix' | 'best_practice' | 'tool_usage'
  description TEXT NOT NULL,
  embedding BLOB,
  source_projects TEXT,         -- JSON: 발견된 프로젝트들
  frequency INTEGER DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

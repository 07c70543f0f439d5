-- Acode's conversation schema (SQLite), verbatim from seed 002.

-- Chats table
CREATE TABLE chats (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    tags TEXT,  -- JSON array
    worktree_id TEXT,
    is_deleted INTEGER DEFAULT 0,
    deleted_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    sync_status TEXT DEFAULT 'pending',
    version INTEGER DEFAULT 1
);

-- Runs table
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    chat_id TEXT NOT NULL REFERENCES chats(id),
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    completed_at TEXT,
    tokens_used INTEGER DEFAULT 0,
    sequence_number INTEGER NOT NULL,
    sync_status TEXT DEFAULT 'pending',
    UNIQUE(chat_id, sequence_number)
);

-- Messages table
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT,  -- JSON
    created_at TEXT NOT NULL,
    sequence_number INTEGER NOT NULL,
    sync_status TEXT DEFAULT 'pending',
    UNIQUE(run_id, sequence_number)
);

-- Indexes
CREATE INDEX idx_chats_worktree ON chats(worktree_id);
CREATE INDEX idx_runs_chat ON runs(chat_id);
CREATE INDEX idx_messages_run ON messages(run_id);

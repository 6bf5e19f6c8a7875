-- +goose Up
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    owner_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name              TEXT NOT NULL DEFAULT '',
    pinned            INTEGER NOT NULL DEFAULT 0,
    agent_config_id   TEXT NOT NULL DEFAULT '',
    project_id        TEXT NOT NULL DEFAULT '',
    planning          INTEGER NOT NULL DEFAULT 0,
    hidden            INTEGER NOT NULL DEFAULT 0,
    parent_session_id TEXT NOT NULL DEFAULT '',
    -- The append point: moved in the transaction of every append.
    tip_entry_id      TEXT NOT NULL DEFAULT '',
    last_seq          INTEGER NOT NULL DEFAULT 0,
    -- Context totals (see domain.ContextTotals), kept with the append point
    -- so the context report reads one row.
    active_chars          INTEGER NOT NULL DEFAULT 0,
    anchor_seq            INTEGER NOT NULL DEFAULT 0,
    anchor_usage          TEXT NOT NULL DEFAULT '{}',
    chars_after_anchor    INTEGER NOT NULL DEFAULT 0,
    session_input_tokens  INTEGER NOT NULL DEFAULT 0,
    session_output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX sessions_owner ON sessions (owner_id, hidden, pinned DESC, updated_at DESC);

-- One row per entry: the whole entry JSON in body, plus the lifted columns
-- every walk and report reads, so they cost rows, never bytes.
CREATE TABLE entries (
    row_id             TEXT PRIMARY KEY, -- UUIDv7: the page cursor
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    entry_id           TEXT NOT NULL,
    parent_id          TEXT NOT NULL DEFAULT '',
    branch_parent      TEXT NOT NULL DEFAULT '',
    seq                INTEGER NOT NULL,
    kind               TEXT NOT NULL,
    source             TEXT NOT NULL DEFAULT '',
    run_id             TEXT NOT NULL DEFAULT '',
    call_id            TEXT NOT NULL DEFAULT '',
    item_type          TEXT NOT NULL DEFAULT '',
    target             TEXT NOT NULL DEFAULT '',
    compacted          INTEGER NOT NULL DEFAULT 0,
    chars              INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER,
    output_tokens      INTEGER,
    cached_tokens      INTEGER,
    cache_write_tokens INTEGER,
    total_tokens       INTEGER,
    body               TEXT NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_entry ON entries (session_id, entry_id);
CREATE INDEX entries_branch_parent ON entries (session_id, branch_parent);
CREATE INDEX entries_parent ON entries (session_id, parent_id);
CREATE INDEX entries_update_target ON entries (session_id, target) WHERE kind = 'update';

-- What each run's build put in front of the conversation (the context
-- report's prompt section); the newest per session is read.
CREATE TABLE context_profiles (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL,
    profile    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, run_id)
);

-- +goose Down
DROP TABLE context_profiles;
DROP TABLE entries;
DROP TABLE sessions;

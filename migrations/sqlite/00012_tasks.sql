-- +goose Up
-- Background tasks: a durable identity over attempts (run_id is the current
-- attempt's run and changes on a retry). Every status change is a
-- compare-and-set on the row; a terminal status is written once. A child
-- session (hidden) holds the attempts' conversation.
CREATE TABLE tasks (
    id                TEXT PRIMARY KEY,
    run_id            TEXT NOT NULL,
    owner_id          TEXT NOT NULL,
    parent_session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    parent_run_id     TEXT NOT NULL DEFAULT '',
    tool_call_id      TEXT NOT NULL DEFAULT '',
    child_session_id  TEXT NOT NULL DEFAULT '',
    agent_config_id   TEXT NOT NULL DEFAULT '',
    label             TEXT NOT NULL DEFAULT '',
    prompt            TEXT NOT NULL DEFAULT '',
    kind              TEXT NOT NULL CHECK (kind IN ('agent', 'workflow')),
    attempt           INTEGER NOT NULL DEFAULT 1,
    dismissed         INTEGER NOT NULL DEFAULT 0,
    status            TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    inherit           TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL DEFAULT '',
    summary           TEXT NOT NULL DEFAULT '',
    result            TEXT NOT NULL DEFAULT '',
    pending_call_id   TEXT NOT NULL DEFAULT '',
    -- NULL while the task waits behind the session's live-task cap: its
    -- run (run_id, reserved) has not been started.
    launched_at       INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    ended_at          INTEGER
);
CREATE INDEX tasks_parent ON tasks (parent_session_id, created_at);
CREATE INDEX tasks_owner ON tasks (owner_id, created_at);
CREATE INDEX tasks_live ON tasks (status) WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_queued ON tasks (parent_session_id, created_at) WHERE launched_at IS NULL AND status = 'working';
CREATE UNIQUE INDEX tasks_run ON tasks (run_id);

-- What a finished task owes its parent session: one notification turn pays
-- every due row. Written in the transaction that finalizes the task as
-- completed or failed (a cancelled task owes nothing); settled rows are
-- kept a while for the record.
CREATE TABLE task_wakeups (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt    INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
    summary    TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    settled_at INTEGER
);
CREATE INDEX task_wakeups_due ON task_wakeups (session_id, created_at) WHERE settled_at IS NULL;
CREATE UNIQUE INDEX task_wakeups_attempt ON task_wakeups (task_id, attempt);

-- +goose Down
DROP TABLE task_wakeups;
DROP TABLE tasks;

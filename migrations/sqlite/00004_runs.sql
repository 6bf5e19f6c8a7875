-- +goose Up
-- One row per run: written at start and at every status change, so the
-- session's run list and a restart know what happened.
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL,
    agent_config_id TEXT NOT NULL DEFAULT '',
    project_id      TEXT NOT NULL DEFAULT '',
    input           TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'completed', 'error', 'cancelled')),
    last_seq        INTEGER NOT NULL DEFAULT 0,
    error_code      TEXT NOT NULL DEFAULT '',
    error_message   TEXT NOT NULL DEFAULT '',
    final_output    TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    ended_at        INTEGER
);
CREATE INDEX runs_session ON runs (session_id, id);
CREATE INDEX runs_status ON runs (status) WHERE status IN ('running', 'interrupted');

-- +goose Down
DROP TABLE runs;

-- +goose Up
-- Triggers start work with nobody at the keyboard: a cron schedule or a
-- signed webhook delivery starts a workflow execution or an agent's turn in
-- the trigger's session. They are session content, so they go with their
-- session, and with the workflow they start; a deleted agent leaves them
-- standing, failing with the reason until re-pointed (no reference).
CREATE TABLE triggers (
    id              TEXT PRIMARY KEY,
    owner_id        TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    kind            TEXT NOT NULL CHECK (kind IN ('cron', 'webhook')),
    schedule        TEXT NOT NULL DEFAULT '',
    target          TEXT NOT NULL CHECK (target IN ('workflow', 'agent')),
    workflow_id     TEXT REFERENCES workflows (id) ON DELETE CASCADE,
    agent_config_id TEXT NOT NULL DEFAULT '',
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    brief           TEXT NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    secret          TEXT NOT NULL DEFAULT '',
    next_fire_at    INTEGER,
    last_fired_at   INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    last_started_id TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX triggers_owner ON triggers (owner_id, id);
CREATE INDEX triggers_due ON triggers (next_fire_at) WHERE kind = 'cron' AND enabled = 1;
CREATE INDEX triggers_session ON triggers (session_id);
CREATE INDEX triggers_workflow ON triggers (workflow_id);

-- +goose Down
DROP TABLE triggers;

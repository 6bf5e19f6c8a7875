-- +goose Up
-- Workflow definitions: scoped configuration like agents (scope + permanent
-- owner; names unique, whatever their case, among globals and among one
-- owner's privates). Steps and budget are JSON: an execution snapshots
-- them into its task's state, so no other row names a step.
CREATE TABLE workflows (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    scope       TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name        TEXT NOT NULL COLLATE NOCASE,
    description TEXT NOT NULL,
    steps       TEXT NOT NULL DEFAULT '[]',
    budget      TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX workflows_global_name ON workflows (name) WHERE scope = 'global';
CREATE UNIQUE INDEX workflows_private_name ON workflows (owner_id, name) WHERE scope = 'private';

-- A workflow step's pause_before approval is filed under the run id the
-- step WILL run as (reserved by its task): no runs row exists yet, so the
-- approvals table drops its reference to runs. A run's approvals still go
-- with its session, and with the pause they belong to.
CREATE TABLE approvals_new (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id       TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    arguments    TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    scope        TEXT NOT NULL DEFAULT '',
    reason       TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    decided_at   INTEGER
);
INSERT INTO approvals_new SELECT id, session_id, run_id, owner_id, tool_call_id, tool_name, arguments, status, scope, reason,
    created_at, decided_at FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_new RENAME TO approvals;
CREATE INDEX approvals_owner ON approvals (owner_id, status);
CREATE INDEX approvals_session ON approvals (session_id, status);
CREATE INDEX approvals_run ON approvals (run_id);
CREATE UNIQUE INDEX approvals_call ON approvals (run_id, tool_call_id);

-- +goose Down
DROP TABLE workflows;

-- +goose Up
-- Tool calls waiting for a person: written, with the run's resume state, in
-- the transaction that pauses the run; removed when the run resumes, is
-- superseded, cancelled or expires.
CREATE TABLE approvals (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
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
CREATE INDEX approvals_owner ON approvals (owner_id, status);
CREATE INDEX approvals_session ON approvals (session_id, status);
CREATE INDEX approvals_run ON approvals (run_id);
CREATE UNIQUE INDEX approvals_call ON approvals (run_id, tool_call_id);

ALTER TABLE runs ADD COLUMN resume_state TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN resume_state;
DROP TABLE approvals;

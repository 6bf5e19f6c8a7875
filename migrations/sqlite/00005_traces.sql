-- +goose Up
-- Span rows carry what a listing shows; payloads live in their own table so
-- a summary listing costs rows, never payload bytes.
CREATE TABLE trace_spans (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id      TEXT NOT NULL DEFAULT '',
    parent_id   TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    meta        TEXT NOT NULL DEFAULT '{}',
    data_bytes  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trace_spans_session ON trace_spans (session_id, started_at, id);
CREATE INDEX trace_spans_started ON trace_spans (started_at);

CREATE TABLE trace_payloads (
    span_id TEXT PRIMARY KEY REFERENCES trace_spans (id) ON DELETE CASCADE,
    data    TEXT NOT NULL
);

-- +goose Down
DROP TABLE trace_payloads;
DROP TABLE trace_spans;

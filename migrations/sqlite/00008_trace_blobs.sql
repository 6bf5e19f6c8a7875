-- +goose Up
-- A model call's payload repeats what the calls before it sent: the whole
-- conversation so far, the tool definitions, the instructions. Payload
-- elements of 256 bytes or more are stored once per session here, and a
-- packed payload (trace_payloads.packed = 1) names them by hash, so a long
-- session's traces grow with what is new in each call, not with the square
-- of its length.
CREATE TABLE trace_blobs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    hash       TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (session_id, hash)
) WITHOUT ROWID;

-- Which span uses which element: pruning spans drops the elements no span
-- of their session still uses.
CREATE TABLE trace_blob_refs (
    span_id TEXT NOT NULL REFERENCES trace_spans (id) ON DELETE CASCADE,
    hash    TEXT NOT NULL,
    PRIMARY KEY (span_id, hash)
) WITHOUT ROWID;
CREATE INDEX trace_blob_refs_hash ON trace_blob_refs (hash);

ALTER TABLE trace_payloads ADD COLUMN packed INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE trace_payloads DROP COLUMN packed;
DROP TABLE trace_blob_refs;
DROP TABLE trace_blobs;

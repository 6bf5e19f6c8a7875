-- +goose Up
-- The server processes sharing this database, each beating while it lives:
-- a replica whose beat is too old is gone, and another fails its runs.
CREATE TABLE replicas (
    id         TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL
);

-- The work only one replica may do at a time (trigger ticks, wake-ups, the
-- reapers), each lease held until it expires unless renewed.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);

-- The replica running each run ('' for runs from before replicas).
ALTER TABLE runs ADD COLUMN replica_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN replica_id;
DROP TABLE leases;
DROP TABLE replicas;

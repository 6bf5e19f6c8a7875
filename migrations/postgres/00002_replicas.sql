-- +goose Up
-- The server processes sharing this database, each beating while it lives:
-- a replica whose beat is too old is gone, and another fails its runs.
CREATE TABLE replicas (
    id         TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);

-- The work only one replica may do at a time (trigger ticks, wake-ups, the
-- reapers), each lease held until it expires unless renewed.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- The replica running each run ('' for runs from before replicas).
ALTER TABLE runs ADD COLUMN replica_id TEXT NOT NULL DEFAULT '';

-- Payloads past NOTIFY's size limit, passed by reference on the bus and
-- read by every replica that hears of them; swept after a minute.
CREATE TABLE bus_payloads (
    id         TEXT PRIMARY KEY,
    data       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX bus_payloads_created ON bus_payloads (created_at);

-- +goose Down
DROP TABLE bus_payloads;
ALTER TABLE runs DROP COLUMN replica_id;
DROP TABLE leases;
DROP TABLE replicas;

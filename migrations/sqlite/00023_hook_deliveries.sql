-- +goose Up
-- The webhook deliveries that fired, each kept until its timestamp would be
-- stale anyway: inserting the row is the replay guard, so a delivery fires
-- once across replicas and restarts. Swept by the hourly upkeep.
CREATE TABLE hook_deliveries (
    trigger_id  TEXT NOT NULL,
    sent_at     TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (trigger_id, sent_at, body_sha256)
);
CREATE INDEX hook_deliveries_expires ON hook_deliveries (expires_at);

-- +goose Down
DROP TABLE hook_deliveries;

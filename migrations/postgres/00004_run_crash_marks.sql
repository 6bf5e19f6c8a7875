-- +goose Up
-- seq_mark: how far a running run's event numbering may have gone, kept
-- ahead of what its watchers were sent, so the event a crash recovery ends
-- the run with is numbered past every id a watcher holds.
ALTER TABLE runs ADD COLUMN seq_mark BIGINT NOT NULL DEFAULT 0;
-- calls_in_flight: the tool calls a running run started and has not yet
-- recorded (JSON, '' for none), so a crash recovery records them with an
-- unknown outcome instead of losing calls that may have taken effect.
ALTER TABLE runs ADD COLUMN calls_in_flight TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN calls_in_flight;
ALTER TABLE runs DROP COLUMN seq_mark;

-- +goose Up
-- partial_output: the text the model call in flight had streamed at a
-- running run's last checkpoint (taken at a bounded interval while it
-- streams, cleared when the call's answer is whole), so a crash does not
-- lose what the person watched arrive: the restart's sweep keeps it in the
-- conversation, marked as cut short.
ALTER TABLE runs ADD COLUMN partial_output TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN partial_output;

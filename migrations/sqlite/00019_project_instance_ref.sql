-- +goose Up
-- instance_ref: which backend instance holds a project's tree, for sandbox
-- types whose instance IS the storage (e2b: the service's sandbox id). It
-- is recorded before the instance is used, so a sandbox the service bills
-- is never one nobody knows about, and only the backend's compare-and-swap
-- writes it (UpdateProject leaves it alone).
ALTER TABLE projects ADD COLUMN instance_ref TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE projects DROP COLUMN instance_ref;

-- +goose Up
-- A task's hidden session names its parent: a session's approval list
-- reads its tasks' pauses, and deleting a session deletes its tasks'
-- sessions, both through this index.
CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id != '';

-- +goose Down
DROP INDEX sessions_parent;

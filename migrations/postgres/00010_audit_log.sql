-- +goose Up
-- The audit log (SQLite's 00030): who did what to which object, when, from
-- where, how it ended and which fields changed (names only). Append-only:
-- the record of a change is written in the change's own transaction; rows
-- are never updated, and deleted only by the retention's prune. seq is the
-- order of the commits (writers hold the write lock) and the cursor.
CREATE TABLE audit_log (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          BIGINT NOT NULL,
    actor_kind  TEXT NOT NULL,
    actor_id    TEXT NOT NULL DEFAULT '',
    actor_name  TEXT NOT NULL DEFAULT '',
    address     TEXT NOT NULL DEFAULT '',
    action      TEXT NOT NULL,
    object_kind TEXT NOT NULL DEFAULT '',
    object_id   TEXT NOT NULL DEFAULT '',
    object_name TEXT NOT NULL DEFAULT '',
    outcome     TEXT NOT NULL,
    fields      TEXT NOT NULL DEFAULT '[]',
    reason      TEXT NOT NULL DEFAULT '',
    method      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor_id, seq);
CREATE INDEX audit_log_object ON audit_log (object_kind, seq);
-- +goose StatementBegin
CREATE FUNCTION audit_log_refuse_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_update();

-- +goose Down
DROP TABLE audit_log;
DROP FUNCTION audit_log_refuse_update();

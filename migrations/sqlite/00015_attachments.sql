-- +goose Up
-- Images people send with a message. The bytes live in their own column,
-- read only when a model call or a download needs them: entries carry a
-- reference (an input_image part naming the id), never the image.
CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    mime       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    width      INTEGER NOT NULL,
    height     INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    data       BLOB NOT NULL
);
CREATE INDEX attachments_created ON attachments (created_at);

-- Which sessions' entries refer to an attachment: written by the insert
-- that stores the entry (a sent message, a fork's copy), gone with the
-- session. An attachment no session holds is an orphan, reclaimed after a
-- grace period.
CREATE TABLE attachment_bindings (
    attachment_id TEXT NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (attachment_id, session_id)
);
CREATE INDEX attachment_bindings_session ON attachment_bindings (session_id);

-- +goose Down
DROP TABLE attachment_bindings;
DROP TABLE attachments;

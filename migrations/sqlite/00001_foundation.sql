-- +goose Up
-- Times are unix milliseconds (UTC); ids are UUIDv7 text.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL COLLATE NOCASE UNIQUE,
    password_hash TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    disabled      INTEGER NOT NULL DEFAULT 0,
    bootstrap     INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
-- At most one bootstrap admin.
CREATE UNIQUE INDEX users_one_bootstrap ON users (bootstrap) WHERE bootstrap = 1;

CREATE TABLE auth_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('session', 'pat', 'launch', 'static')),
    name         TEXT NOT NULL DEFAULT '',
    hash         TEXT NOT NULL UNIQUE,
    hint         TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER
);
CREATE INDEX auth_tokens_user ON auth_tokens (user_id, id);
CREATE INDEX auth_tokens_expiry ON auth_tokens (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

-- The server's own facts about this database (the secret-key canary), kept
-- apart from settings so no API lists them.
CREATE TABLE server_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE server_meta;
DROP TABLE settings;
DROP TABLE auth_tokens;
DROP TABLE users;

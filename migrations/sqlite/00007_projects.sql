-- +goose Up
-- Sandboxes are host configuration (admins write); the config is one JSON
-- column decoded by the type's parser, its secret fields sealed in place.
CREATE TABLE sandboxes (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL COLLATE NOCASE UNIQUE,
    type       TEXT NOT NULL,
    config     TEXT NOT NULL DEFAULT '{}',
    prompt     TEXT NOT NULL DEFAULT '',
    revision   INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- A project is one user's working tree on one sandbox. The sandbox cannot
-- be deleted under it (the service refuses first; the key is the backstop).
CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL COLLATE NOCASE,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id),
    env        TEXT NOT NULL DEFAULT '[]', -- [{name, value}], values sealed
    revision   INTEGER NOT NULL DEFAULT 1,
    generation INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX projects_owner_name ON projects (owner_id, name);
CREATE INDEX projects_sandbox ON projects (sandbox_id);

-- Binding counts and the delete guard read sessions by project.
CREATE INDEX sessions_project ON sessions (project_id) WHERE project_id <> '';

-- +goose Down
DROP INDEX sessions_project;
DROP TABLE projects;
DROP TABLE sandboxes;

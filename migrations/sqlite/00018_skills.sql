-- +goose Up
-- Skills: one SKILL.md per row, scoped configuration like agents. name and
-- description are read from the document's frontmatter at save time. An
-- imported skill carries its source: source_repo groups a repository's
-- skills (they move scope as one), repo_label leads the model-facing name
-- (owner/repo:name, host:name, or the bare name for one authored here), and
-- a skill is unique per (repo_label, name) among globals and among one
-- owner's privates, whatever the case.
CREATE TABLE skills (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES users (id),
    scope         TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name          TEXT NOT NULL COLLATE NOCASE,
    description   TEXT NOT NULL,
    content       TEXT NOT NULL,
    source_repo   TEXT NOT NULL DEFAULT '',
    repo_label    TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
    source_path   TEXT NOT NULL DEFAULT '',
    source_commit TEXT NOT NULL DEFAULT '',
    detached      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX skills_global_name ON skills (repo_label, name) WHERE scope = 'global';
CREATE UNIQUE INDEX skills_private_name ON skills (owner_id, repo_label, name) WHERE scope = 'private';
CREATE INDEX skills_group ON skills (source_repo, owner_id) WHERE source_repo != '';

-- +goose Down
DROP TABLE skills;

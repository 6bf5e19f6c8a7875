-- +goose Up
-- Scoped configuration: scope + permanent owner. Names are unique among
-- globals, and among one owner's privates (case-insensitively).

CREATE TABLE providers (
    id             TEXT PRIMARY KEY,
    owner_id       TEXT NOT NULL REFERENCES users (id),
    scope          TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name           TEXT NOT NULL COLLATE NOCASE,
    type           TEXT NOT NULL,
    auth_mode      TEXT NOT NULL,
    api            TEXT NOT NULL,
    base_url       TEXT NOT NULL DEFAULT '',
    api_key        TEXT NOT NULL DEFAULT '', -- sealed when a secret key is set
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE UNIQUE INDEX providers_global_name ON providers (name) WHERE scope = 'global';
CREATE UNIQUE INDEX providers_private_name ON providers (owner_id, name) WHERE scope = 'private';

-- Each group of knobs is one JSON column, so a new knob needs no migration.
CREATE TABLE agents (
    id             TEXT PRIMARY KEY,
    owner_id       TEXT NOT NULL REFERENCES users (id),
    scope          TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name           TEXT NOT NULL COLLATE NOCASE,
    avatar         TEXT NOT NULL DEFAULT '',
    description    TEXT NOT NULL DEFAULT '',
    instructions   TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    provider_id    TEXT NOT NULL DEFAULT '',
    context_window INTEGER NOT NULL DEFAULT 0,
    behavior       TEXT NOT NULL DEFAULT '{}',
    resilience     TEXT NOT NULL DEFAULT '{}',
    guardrails     TEXT NOT NULL DEFAULT '{}',
    session        TEXT NOT NULL DEFAULT '{}',
    approval       TEXT NOT NULL DEFAULT '{}',
    compaction     TEXT NOT NULL DEFAULT '{}',
    model_settings TEXT NOT NULL DEFAULT '{}',
    tools          TEXT NOT NULL DEFAULT '[]',
    skills         TEXT NOT NULL DEFAULT 'null', -- null = every visible skill
    handoffs       TEXT NOT NULL DEFAULT '[]',
    error_handlers TEXT NOT NULL DEFAULT '{}',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE UNIQUE INDEX agents_global_name ON agents (name) WHERE scope = 'global';
CREATE UNIQUE INDEX agents_private_name ON agents (owner_id, name) WHERE scope = 'private';
CREATE INDEX agents_provider ON agents (provider_id);

-- Host configuration: one namespace of names.
CREATE TABLE guardrails (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL COLLATE NOCASE UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    stages      TEXT NOT NULL, -- JSON array
    mode        TEXT NOT NULL CHECK (mode IN ('regex', 'max_length')),
    pattern     TEXT NOT NULL DEFAULT '',
    max_chars   INTEGER NOT NULL DEFAULT 0,
    blocking    INTEGER NOT NULL DEFAULT 0,
    builtin     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

INSERT INTO guardrails (id, name, description, stages, mode, pattern, max_chars, blocking, builtin, created_at, updated_at) VALUES
    ('00000000-0000-7000-8000-000000000001', 'content_filter',
     'Refuses common jailbreak phrasing in the run input and in tool arguments.',
     '["input","tool_input"]', 'regex',
     '(?i)\b(ignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier)\s+(instructions|prompts|rules)|disregard\s+(all\s+|any\s+)?(previous|prior|your)\s+(instructions|rules)|you\s+are\s+now\s+(DAN|in\s+developer\s+mode)|do\s+anything\s+now|jailbreak(ing)?)\b',
     0, 1, 1, 0, 0),
    ('00000000-0000-7000-8000-000000000002', 'max_input_length',
     'Refuses a run input longer than 50,000 characters before any model call.',
     '["input"]', 'max_length', '', 50000, 1, 1, 0, 0),
    ('00000000-0000-7000-8000-000000000003', 'max_output_length',
     'Fails a run whose final output is longer than 50,000 characters.',
     '["output"]', 'max_length', '', 50000, 0, 1, 0, 0);

-- Global memories have an empty agent id; an agent's go with it.
CREATE TABLE memories (
    id              TEXT PRIMARY KEY,
    agent_config_id TEXT REFERENCES agents (id) ON DELETE CASCADE,
    key             TEXT NOT NULL COLLATE NOCASE,
    content         TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX memories_scope_key ON memories (ifnull(agent_config_id, ''), key);

-- +goose Down
DROP TABLE memories;
DROP TABLE guardrails;
DROP TABLE agents;
DROP TABLE providers;

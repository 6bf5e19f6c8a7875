-- +goose Up
-- The Postgres baseline: the schema SQLite reached at its migration 00021,
-- in one step. Times are unix milliseconds (BIGINT), flags are 0/1 BIGINT
-- (the store's queries are shared with SQLite), JSON is TEXT, and the
-- names SQLite compares without case are CITEXT.
CREATE EXTENSION IF NOT EXISTS citext;

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      CITEXT NOT NULL CONSTRAINT users_username_nocase UNIQUE,
    password_hash TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    disabled      BIGINT NOT NULL DEFAULT 0,
    bootstrap     BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    username_key TEXT NOT NULL DEFAULT '');
CREATE TABLE auth_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL CHECK (kind IN ('session', 'pat', 'launch', 'static')),
    name         TEXT NOT NULL DEFAULT '',
    hash         TEXT NOT NULL UNIQUE,
    hint         TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL,
    expires_at   BIGINT
);
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE TABLE server_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE providers (
    id             TEXT PRIMARY KEY,
    owner_id       TEXT NOT NULL REFERENCES users (id),
    scope          TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name           CITEXT NOT NULL,
    type           TEXT NOT NULL,
    auth_mode      TEXT NOT NULL,
    api            TEXT NOT NULL,
    base_url       TEXT NOT NULL DEFAULT '',
    api_key        TEXT NOT NULL DEFAULT '', -- sealed when a secret key is set
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    chatgpt_token TEXT NOT NULL DEFAULT '');
CREATE TABLE agents (
    id             TEXT PRIMARY KEY,
    owner_id       TEXT NOT NULL REFERENCES users (id),
    scope          TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name           CITEXT NOT NULL,
    avatar         TEXT NOT NULL DEFAULT '',
    description    TEXT NOT NULL DEFAULT '',
    instructions   TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    provider_id    TEXT NOT NULL DEFAULT '',
    context_window BIGINT NOT NULL DEFAULT 0,
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
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE TABLE guardrails (
    id          TEXT PRIMARY KEY,
    name        CITEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    stages      TEXT NOT NULL, -- JSON array
    mode        TEXT NOT NULL CHECK (mode IN ('regex', 'max_length')),
    pattern     TEXT NOT NULL DEFAULT '',
    max_chars   BIGINT NOT NULL DEFAULT 0,
    blocking    BIGINT NOT NULL DEFAULT 0,
    builtin     BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE memories (
    id              TEXT PRIMARY KEY,
    agent_config_id TEXT REFERENCES agents (id) ON DELETE CASCADE,
    key             CITEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    owner_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name              TEXT NOT NULL DEFAULT '',
    pinned            BIGINT NOT NULL DEFAULT 0,
    agent_config_id   TEXT NOT NULL DEFAULT '',
    project_id        TEXT NOT NULL DEFAULT '',
    planning          BIGINT NOT NULL DEFAULT 0,
    hidden            BIGINT NOT NULL DEFAULT 0,
    parent_session_id TEXT NOT NULL DEFAULT '',
    -- The append point: moved in the transaction of every append.
    tip_entry_id      TEXT NOT NULL DEFAULT '',
    last_seq          BIGINT NOT NULL DEFAULT 0,
    -- Context totals (see domain.ContextTotals), kept with the append point
    -- so the context report reads one row.
    active_chars          BIGINT NOT NULL DEFAULT 0,
    anchor_seq            BIGINT NOT NULL DEFAULT 0,
    anchor_usage          TEXT NOT NULL DEFAULT '{}',
    chars_after_anchor    BIGINT NOT NULL DEFAULT 0,
    session_input_tokens  BIGINT NOT NULL DEFAULT 0,
    session_output_tokens BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE TABLE context_profiles (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id     TEXT NOT NULL,
    profile    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, run_id)
);
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL,
    agent_config_id TEXT NOT NULL DEFAULT '',
    project_id      TEXT NOT NULL DEFAULT '',
    input           TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'completed', 'error', 'cancelled')),
    last_seq        BIGINT NOT NULL DEFAULT 0,
    error_code      TEXT NOT NULL DEFAULT '',
    error_message   TEXT NOT NULL DEFAULT '',
    final_output    TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    resume_state TEXT NOT NULL DEFAULT '',
    partial_output TEXT NOT NULL DEFAULT '');
CREATE TABLE trace_spans (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id      TEXT NOT NULL DEFAULT '',
    parent_id   TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    started_at  BIGINT NOT NULL,
    ended_at    BIGINT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    meta        TEXT NOT NULL DEFAULT '{}',
    data_bytes  BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE trace_payloads (
    span_id TEXT PRIMARY KEY REFERENCES trace_spans (id) ON DELETE CASCADE,
    data    TEXT NOT NULL,
    packed BIGINT NOT NULL DEFAULT 0);
CREATE TABLE sandboxes (
    id         TEXT PRIMARY KEY,
    name       CITEXT NOT NULL UNIQUE,
    type       TEXT NOT NULL,
    config     TEXT NOT NULL DEFAULT '{}',
    prompt     TEXT NOT NULL DEFAULT '',
    revision   BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    ssh_host_key TEXT NOT NULL DEFAULT '',
    ssh_host_key_pinned_at BIGINT NOT NULL DEFAULT 0);
CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    name       CITEXT NOT NULL,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id),
    env        TEXT NOT NULL DEFAULT '[]', -- [{name, value}], values sealed
    revision   BIGINT NOT NULL DEFAULT 1,
    generation BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    instance_ref TEXT NOT NULL DEFAULT '');
CREATE TABLE trace_blobs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    hash       TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (session_id, hash)
);
CREATE TABLE trace_blob_refs (
    span_id TEXT NOT NULL REFERENCES trace_spans (id) ON DELETE CASCADE,
    hash    TEXT NOT NULL,
    PRIMARY KEY (span_id, hash)
);
CREATE TABLE mcp_servers (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    scope       TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name        CITEXT NOT NULL UNIQUE,
    enabled     BIGINT NOT NULL DEFAULT 1,
    config      TEXT NOT NULL DEFAULT '{}',
    oauth_grant TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE tasks (
    id                TEXT PRIMARY KEY,
    run_id            TEXT NOT NULL,
    owner_id          TEXT NOT NULL,
    parent_session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    parent_run_id     TEXT NOT NULL DEFAULT '',
    tool_call_id      TEXT NOT NULL DEFAULT '',
    child_session_id  TEXT NOT NULL DEFAULT '',
    agent_config_id   TEXT NOT NULL DEFAULT '',
    label             TEXT NOT NULL DEFAULT '',
    prompt            TEXT NOT NULL DEFAULT '',
    kind              TEXT NOT NULL CHECK (kind IN ('agent', 'workflow')),
    attempt           BIGINT NOT NULL DEFAULT 1,
    dismissed         BIGINT NOT NULL DEFAULT 0,
    status            TEXT NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    inherit           TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL DEFAULT '',
    summary           TEXT NOT NULL DEFAULT '',
    result            TEXT NOT NULL DEFAULT '',
    pending_call_id   TEXT NOT NULL DEFAULT '',
    -- NULL while the task waits behind the session's live-task cap: its
    -- run (run_id, reserved) has not been started.
    launched_at       BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    ended_at          BIGINT
);
CREATE TABLE task_wakeups (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt    BIGINT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
    summary    TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    settled_at BIGINT
);
CREATE TABLE entries (
    row_id             TEXT PRIMARY KEY, -- UUIDv7: the page cursor
    session_id         TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    entry_id           TEXT NOT NULL,
    parent_id          TEXT NOT NULL DEFAULT '',
    branch_parent      TEXT NOT NULL DEFAULT '',
    seq                BIGINT NOT NULL,
    kind               TEXT NOT NULL,
    source             TEXT NOT NULL DEFAULT '',
    run_id             TEXT NOT NULL DEFAULT '',
    call_id            TEXT NOT NULL DEFAULT '',
    item_type          TEXT NOT NULL DEFAULT '',
    target             TEXT NOT NULL DEFAULT '',
    compacted          BIGINT NOT NULL DEFAULT 0,
    chars              BIGINT NOT NULL DEFAULT 0,
    input_tokens       BIGINT,
    output_tokens      BIGINT,
    cached_tokens      BIGINT,
    cache_write_tokens BIGINT,
    total_tokens       BIGINT,
    created_at         BIGINT NOT NULL,
    body               TEXT NOT NULL
);
CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    mime       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    width      BIGINT NOT NULL,
    height     BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    data       BYTEA NOT NULL
);
CREATE TABLE attachment_bindings (
    attachment_id TEXT NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (attachment_id, session_id)
);
CREATE TABLE workflows (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    scope       TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name        CITEXT NOT NULL,
    description TEXT NOT NULL,
    steps       TEXT NOT NULL DEFAULT '[]',
    budget      TEXT NOT NULL DEFAULT '{}',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE TABLE approvals (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id       TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    arguments    TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    scope        TEXT NOT NULL DEFAULT '',
    reason       TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    decided_at   BIGINT
);
CREATE TABLE triggers (
    id              TEXT PRIMARY KEY,
    owner_id        TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    kind            TEXT NOT NULL CHECK (kind IN ('cron', 'webhook')),
    schedule        TEXT NOT NULL DEFAULT '',
    target          TEXT NOT NULL CHECK (target IN ('workflow', 'agent')),
    workflow_id     TEXT REFERENCES workflows (id) ON DELETE CASCADE,
    agent_config_id TEXT NOT NULL DEFAULT '',
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    brief           TEXT NOT NULL,
    enabled         BIGINT NOT NULL DEFAULT 1,
    secret          TEXT NOT NULL DEFAULT '',
    next_fire_at    BIGINT,
    last_fired_at   BIGINT,
    last_error      TEXT NOT NULL DEFAULT '',
    last_started_id TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE TABLE skills (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES users (id),
    scope         TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name          CITEXT NOT NULL,
    description   TEXT NOT NULL,
    content       TEXT NOT NULL,
    source_repo   TEXT NOT NULL DEFAULT '',
    repo_label    CITEXT NOT NULL DEFAULT '',
    source_path   TEXT NOT NULL DEFAULT '',
    source_commit TEXT NOT NULL DEFAULT '',
    detached      BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE TABLE chatgpt_logins (
    state       TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_one_bootstrap ON users (bootstrap) WHERE bootstrap = 1;
CREATE INDEX auth_tokens_user ON auth_tokens (user_id, id);
CREATE INDEX auth_tokens_expiry ON auth_tokens (expires_at) WHERE expires_at IS NOT NULL;
CREATE UNIQUE INDEX providers_global_name ON providers (name) WHERE scope = 'global';
CREATE UNIQUE INDEX providers_private_name ON providers (owner_id, name) WHERE scope = 'private';
CREATE UNIQUE INDEX agents_global_name ON agents (name) WHERE scope = 'global';
CREATE UNIQUE INDEX agents_private_name ON agents (owner_id, name) WHERE scope = 'private';
CREATE INDEX agents_provider ON agents (provider_id);
CREATE UNIQUE INDEX memories_scope_key ON memories (coalesce(agent_config_id, ''), key);
CREATE INDEX sessions_owner ON sessions (owner_id, hidden, pinned DESC, updated_at DESC);
CREATE INDEX runs_session ON runs (session_id, id);
CREATE INDEX runs_status ON runs (status) WHERE status IN ('running', 'interrupted');
CREATE INDEX trace_spans_session ON trace_spans (session_id, started_at, id);
CREATE INDEX trace_spans_started ON trace_spans (started_at);
CREATE UNIQUE INDEX projects_owner_name ON projects (owner_id, name);
CREATE INDEX projects_sandbox ON projects (sandbox_id);
CREATE INDEX sessions_project ON sessions (project_id) WHERE project_id <> '';
CREATE INDEX trace_blob_refs_hash ON trace_blob_refs (hash);
CREATE UNIQUE INDEX users_username_key ON users (username_key);
CREATE INDEX tasks_parent ON tasks (parent_session_id, created_at);
CREATE INDEX tasks_owner ON tasks (owner_id, created_at);
CREATE INDEX tasks_live ON tasks (status) WHERE status IN ('working', 'input_required');
CREATE INDEX tasks_queued ON tasks (parent_session_id, created_at) WHERE launched_at IS NULL AND status = 'working';
CREATE UNIQUE INDEX tasks_run ON tasks (run_id);
CREATE INDEX task_wakeups_due ON task_wakeups (session_id, created_at) WHERE settled_at IS NULL;
CREATE UNIQUE INDEX task_wakeups_attempt ON task_wakeups (task_id, attempt);
CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id != '';
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_entry ON entries (session_id, entry_id);
CREATE INDEX entries_branch_parent ON entries (session_id, branch_parent);
CREATE INDEX entries_parent ON entries (session_id, parent_id);
CREATE INDEX entries_update_target ON entries (session_id, target) WHERE kind = 'update';
CREATE INDEX attachments_created ON attachments (created_at);
CREATE INDEX attachment_bindings_session ON attachment_bindings (session_id);
CREATE UNIQUE INDEX workflows_global_name ON workflows (name) WHERE scope = 'global';
CREATE UNIQUE INDEX workflows_private_name ON workflows (owner_id, name) WHERE scope = 'private';
CREATE INDEX approvals_owner ON approvals (owner_id, status);
CREATE INDEX approvals_session ON approvals (session_id, status);
CREATE INDEX approvals_run ON approvals (run_id);
CREATE UNIQUE INDEX approvals_call ON approvals (run_id, tool_call_id);
CREATE INDEX triggers_owner ON triggers (owner_id, id);
CREATE INDEX triggers_due ON triggers (next_fire_at) WHERE kind = 'cron' AND enabled = 1;
CREATE INDEX triggers_session ON triggers (session_id);
CREATE INDEX triggers_workflow ON triggers (workflow_id);
CREATE UNIQUE INDEX skills_global_name ON skills (repo_label, name) WHERE scope = 'global';
CREATE UNIQUE INDEX skills_private_name ON skills (owner_id, repo_label, name) WHERE scope = 'private';
CREATE INDEX skills_group ON skills (source_repo, owner_id) WHERE source_repo != '';
CREATE INDEX chatgpt_logins_expires ON chatgpt_logins (expires_at);


-- The built-in guardrails (SQLite seeds them in its 00002).
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

-- +goose Down
DROP TABLE chatgpt_logins;
DROP TABLE skills;
DROP TABLE triggers;
DROP TABLE approvals;
DROP TABLE workflows;
DROP TABLE attachment_bindings;
DROP TABLE attachments;
DROP TABLE entries;
DROP TABLE task_wakeups;
DROP TABLE tasks;
DROP TABLE mcp_servers;
DROP TABLE trace_blob_refs;
DROP TABLE trace_blobs;
DROP TABLE projects;
DROP TABLE sandboxes;
DROP TABLE trace_payloads;
DROP TABLE trace_spans;
DROP TABLE runs;
DROP TABLE context_profiles;
DROP TABLE sessions;
DROP TABLE memories;
DROP TABLE guardrails;
DROP TABLE agents;
DROP TABLE providers;
DROP TABLE server_meta;
DROP TABLE settings;
DROP TABLE auth_tokens;
DROP TABLE users;

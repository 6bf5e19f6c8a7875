-- +goose Up
-- MCP servers: scoped configuration like agents, but a name is unique across
-- every owner (case-insensitively): it prefixes the server's tool names, and
-- an agent must never see two tools of one name. config is the JSON of
-- {endpoint, headers, auth_mode, oauth_client_id, oauth_client_secret,
-- oauth_scopes} with header values and the client secret sealed; oauth_grant
-- is the sealed JSON of the OAuth grant ('' = none), written by the one
-- grant writer on every sign-in and refresh.
CREATE TABLE mcp_servers (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    scope       TEXT NOT NULL CHECK (scope IN ('private', 'global')),
    name        TEXT NOT NULL COLLATE NOCASE UNIQUE,
    enabled     INTEGER NOT NULL DEFAULT 1,
    config      TEXT NOT NULL DEFAULT '{}',
    oauth_grant TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE mcp_servers;

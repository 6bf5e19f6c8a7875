-- +goose Up
-- Each person's own OAuth grant for a shared MCP server whose config says
-- each person signs in (per_person_auth): the sealed JSON of the grant, as
-- mcp_servers.oauth_grant holds the one shared grant, written by the one
-- grant writer on every sign-in and refresh. A grant goes with its server
-- and with its person.
CREATE TABLE mcp_personal_grants (
    server_id   TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    oauth_grant TEXT NOT NULL,
    PRIMARY KEY (server_id, user_id)
);
CREATE INDEX mcp_personal_grants_user ON mcp_personal_grants (user_id);

-- +goose Down
DROP TABLE mcp_personal_grants;

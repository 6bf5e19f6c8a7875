-- +goose Up
-- One interactive MCP OAuth sign-in waiting for its callback, by the state
-- its authorize URL carries. Kept in the database so the callback completes
-- it on whichever replica the browser reaches: that replica checks the
-- callback is the initiator's (user_id, or the hash of the browser's
-- binding cookie) and files the code here once (delivered); the replica
-- whose dial began the sign-in, holding the PKCE verifier, takes it and
-- exchanges it. Rows end with their sign-in, or expire.
CREATE TABLE mcp_signins (
    state        TEXT PRIMARY KEY,
    server_id    TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL,
    binding_hash TEXT NOT NULL,
    redirect_url TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    delivered    BIGINT NOT NULL DEFAULT 0,
    code         TEXT NOT NULL DEFAULT '',
    iss          TEXT NOT NULL DEFAULT '',
    refusal      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX mcp_signins_expires ON mcp_signins (expires_at);

-- +goose Down
DROP TABLE mcp_signins;

-- +goose Up
-- chatgpt_token: a chatgpt_login provider's sign-in (access, refresh and ID
-- tokens as sealed JSON), shared by every agent on the provider. Only the
-- sign-in flow and the refresh's compare-and-swap write it; UpdateProvider
-- leaves it alone.
ALTER TABLE providers ADD COLUMN chatgpt_token TEXT NOT NULL DEFAULT '';

-- One sign-in waiting for its pasted callback URL: the PKCE verifier by the
-- state the authorize URL carried. Kept in the database so the callback can
-- be completed after a restart or on another replica, until it expires.
CREATE TABLE chatgpt_logins (
    state       TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    verifier    TEXT NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX chatgpt_logins_expires ON chatgpt_logins (expires_at);

-- +goose Down
DROP TABLE chatgpt_logins;
ALTER TABLE providers DROP COLUMN chatgpt_token;

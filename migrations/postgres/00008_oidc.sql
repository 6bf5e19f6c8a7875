-- +goose Up
-- Single sign-on. An account of an OpenID Provider is known by (issuer,
-- subject), never by its email (which the provider may reassign): the
-- identity links it to the user made (or linked) on its first sign-in, and
-- goes with that user.
CREATE TABLE oidc_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_user ON oidc_identities (user_id);

-- One single sign-on waiting for the provider's redirect back, by the
-- state its authorize URL carries: kept in the database so the callback
-- completes on whichever replica the browser reaches, taken (deleted) by
-- the first callback that names it. binding_hash is the SHA-256 of the
-- secret the starting browser holds in a cookie. Rows end with their
-- sign-in, or expire (dropped by the next start).
CREATE TABLE oidc_attempts (
    state        TEXT PRIMARY KEY,
    nonce        TEXT NOT NULL,
    verifier     TEXT NOT NULL,
    binding_hash TEXT NOT NULL,
    redirect_url TEXT NOT NULL,
    return_to    TEXT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX oidc_attempts_expires ON oidc_attempts (expires_at);

-- +goose Down
DROP TABLE oidc_attempts;
DROP TABLE oidc_identities;

package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// OIDCAuthorize is what an authorize URL carries.
type OIDCAuthorize struct {
	State       string
	Nonce       string
	Verifier    string // PKCE: the URL carries its S256 challenge
	RedirectURL string
}

// OIDCRedeem is what the provider's redirect back hands in, with what the
// attempt kept to prove it.
type OIDCRedeem struct {
	Code        string
	Verifier    string
	RedirectURL string
	Nonce       string
}

// OIDCProvider is an OpenID Provider: discovery, the authorization code
// flow with PKCE, and ID token verification against its keys.
type OIDCProvider interface {
	// Issuer is the provider's issuer URL, the first half of an
	// identity's key.
	Issuer() string
	// AuthorizeURL is where the browser goes to sign in. Returns upstream
	// when the provider's discovery cannot be read.
	AuthorizeURL(ctx context.Context, a OIDCAuthorize) (string, error)
	// Redeem exchanges the code and verifies the ID token (signature
	// against the provider's keys, issuer, audience, expiry, nonce).
	// Returns upstream when the provider cannot be reached or refuses the
	// code, unauthorized when the ID token does not verify.
	Redeem(ctx context.Context, r OIDCRedeem) (domain.OIDCClaims, error)
}

// OIDCStore keeps single sign-on attempts and the identities linked to
// users.
type OIDCStore interface {
	// InsertOIDCAttempt stores a, dropping attempts expired at now.
	// Returns conflict when the state is taken.
	InsertOIDCAttempt(ctx context.Context, a domain.OIDCAttempt, now time.Time) error
	// TakeOIDCAttempt deletes and returns the attempt under state: one
	// use. Returns not_found when there is none or it expired at now.
	TakeOIDCAttempt(ctx context.Context, state string, now time.Time) (domain.OIDCAttempt, error)
	// FindOIDCIdentity returns the identity (issuer, subject), or
	// not_found.
	FindOIDCIdentity(ctx context.Context, issuer, subject string) (domain.OIDCIdentity, error)
	// CreateOIDCIdentity links an identity to its user. Returns conflict
	// when (issuer, subject) is linked already or the user does not
	// exist. An identity goes with its user.
	CreateOIDCIdentity(ctx context.Context, id domain.OIDCIdentity) error
	// CreateOIDCUser makes the account u linked to identity id (whose
	// UserID is u.ID) in one transaction: neither stands without the
	// other. Returns conflict when the username is taken or (issuer,
	// subject) is linked already.
	CreateOIDCUser(ctx context.Context, u domain.User, id domain.OIDCIdentity) error
}

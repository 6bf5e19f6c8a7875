package domain

import (
	"strings"
	"time"
)

// OIDCLinkVerifiedEmailSetting lets a first single sign-on join the local
// account whose username is the provider's verified email, instead of
// making a new account. Off by default: an email is only as good as the
// provider that vouches for it, and an admin decides to trust that.
const OIDCLinkVerifiedEmailSetting = "oidc_link_verified_email"

// OIDCAttemptTTL bounds how long a single sign-on may take between the
// start and the provider's redirect back.
const OIDCAttemptTTL = 10 * time.Minute

// OIDCAttempt is one single sign-on waiting for the provider's redirect
// back, by the state its authorize URL carries. It lives in the store so
// the callback completes on whichever replica the browser reaches, and it
// is used once.
type OIDCAttempt struct {
	State string
	// Nonce is what the ID token must carry (replay protection).
	Nonce string
	// Verifier is the PKCE code verifier the token exchange proves.
	Verifier string
	// BindingHash is the SHA-256 (hex) of the secret the browser that
	// started carries back in a cookie: a callback in another browser
	// completes nothing.
	BindingHash string
	// RedirectURL is the callback the provider returns to; the token
	// exchange must name the same one.
	RedirectURL string
	// ReturnTo is the workbench path the person lands on afterwards.
	ReturnTo  string
	ExpiresAt time.Time
}

// OIDCIdentity links a provider's account (issuer, subject) to a user.
type OIDCIdentity struct {
	Issuer    string
	Subject   string
	UserID    string
	Email     string // as the provider said at linking, for admins to read
	CreatedAt time.Time
}

// OIDCClaims is what a verified ID token says about the person.
type OIDCClaims struct {
	Issuer            string
	Subject           string
	Email             string
	EmailVerified     bool
	PreferredUsername string
	Name              string
	// Groups is the configured groups (or roles) claim; HasGroups tells
	// an empty list from a missing claim.
	Groups    []string
	HasGroups bool
}

// EmailDomain is the part of the email after its last @, lower case;
// "" for no email.
func (c OIDCClaims) EmailDomain() string {
	i := strings.LastIndexByte(c.Email, '@')
	if i < 0 {
		return ""
	}
	return strings.ToLower(c.Email[i+1:])
}

// OIDCRefusal is the short reason a single sign-on was refused: the UI
// turns it into a sentence in people's terms.
type OIDCRefusal string

// The refusals.
const (
	RefusedDomain       OIDCRefusal = "domain"        // the email's domain is not allowed
	RefusedDisabled     OIDCRefusal = "disabled"      // the account is disabled
	RefusedClaimMissing OIDCRefusal = "claim_missing" // the groups (or email) claim is missing
	RefusedGroup        OIDCRefusal = "group"         // in none of the allowed groups
	RefusedExpired      OIDCRefusal = "expired"       // no such attempt: expired, used, or another browser
	RefusedProvider     OIDCRefusal = "provider"      // the provider refused or could not be reached
	RefusedInvalid      OIDCRefusal = "invalid"       // the ID token did not verify
	RefusedAccount      OIDCRefusal = "account"       // no account could be made for the person
)

package domain

import (
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// TokenKind says how a bearer token came to be, which fixes its lifetime.
type TokenKind string

// The token kinds.
const (
	// TokenSession is minted by a password login.
	TokenSession TokenKind = "session"
	// TokenPersonal is a personal access token for scripts.
	TokenPersonal TokenKind = "pat"
	// TokenLaunch is minted at start for the ready line's sign-in link.
	TokenLaunch TokenKind = "launch"
	// TokenStatic is the bootstrap admin's token fixed by AGENTS_TOKEN.
	TokenStatic TokenKind = "static"
)

// Lifetimes of the token kinds that expire by themselves.
const (
	// SessionIdle is how long a session (or launch) token lives unused.
	SessionIdle = 30 * 24 * time.Hour
	// SessionCap is the most a session token lives however often it is used.
	SessionCap = 90 * 24 * time.Hour
	// MaxPersonalTokenDays bounds a personal token's requested lifetime.
	MaxPersonalTokenDays = 3650
	// TouchEvery bounds how often a token's last use is written back, so
	// reads do not turn into one write per request.
	TouchEvery = time.Minute
)

// TokenPrefix starts every token this server mints, so a leaked one is
// recognisable by secret scanners.
func TokenPrefix(kind TokenKind) string {
	switch kind {
	case TokenPersonal:
		return "ags_p_"
	case TokenSession:
		return "ags_s_"
	case TokenLaunch:
		return "ags_l_"
	default:
		return "ags_"
	}
}

// Token is a bearer credential, stored only as its hash.
type Token struct {
	ID         string
	UserID     string
	Kind       TokenKind
	Name       string
	Hash       string // hex SHA-256 of the token text
	Hint       string // the first characters, to tell tokens apart in a list
	CreatedAt  time.Time
	LastUsedAt time.Time
	ExpiresAt  *time.Time // nil: never expires
}

// Expired reports whether the token may no longer authenticate at now.
func (t Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// Slides reports whether using the token pushes its expiry forward.
func (t Token) Slides() bool { return t.Kind == TokenSession || t.Kind == TokenLaunch }

// SlidExpiry is the expiry after a use at now: idle time from now, never past
// the cap counted from creation.
func (t Token) SlidExpiry(now time.Time) time.Time {
	exp := now.Add(SessionIdle)
	if limit := t.CreatedAt.Add(SessionCap); exp.After(limit) {
		exp = limit
	}
	return exp
}

// PersonalTokenExpiry turns a requested lifetime in days into an expiry; 0
// means never. Returns validation for a negative or oversized value.
func PersonalTokenExpiry(now time.Time, days int) (*time.Time, error) {
	if days < 0 || days > MaxPersonalTokenDays {
		return nil, errs.Field("expires_in_days", "must be between 0 (never) and %d", MaxPersonalTokenDays)
	}
	if days == 0 {
		return nil, nil
	}
	exp := now.Add(time.Duration(days) * 24 * time.Hour)
	return &exp, nil
}

// Principal is the authenticated caller of a request.
type Principal struct {
	User    User
	TokenID string
}

// IsAdmin reports whether the caller is an admin.
func (p Principal) IsAdmin() bool { return p.User.IsAdmin() }

// RequireAdmin refuses a non-admin caller. Returns forbidden.
func (p Principal) RequireAdmin() error {
	if !p.IsAdmin() {
		return errs.E(errs.Forbidden, "admin role required")
	}
	return nil
}

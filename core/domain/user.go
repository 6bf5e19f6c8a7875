package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/agents-server/agents-server/core/errs"
)

// Role is what a user may administer: admins run the host, members use it.
type Role string

// The two roles.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// Valid reports whether r is one of the two roles.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleMember }

// BootstrapUsername is the name of the admin that exists from the first start.
const BootstrapUsername = "admin"

// Sign-in name and password bounds: a username of at most MaxUsernameLen
// characters, a password of at least MinPasswordLen characters and at most
// MaxPasswordLen bytes (which keeps hashing cost bounded).
const (
	MinPasswordLen = 8
	MaxPasswordLen = 256
	MaxUsernameLen = 64
)

// User is a person (or script) who signs in to the workbench.
type User struct {
	ID           string
	Username     string
	Role         Role
	Disabled     bool
	Bootstrap    bool // the admin created on first start; the ready line signs it in
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// IsAdmin reports whether the user holds the admin role.
func (u User) IsAdmin() bool { return u.Role == RoleAdmin }

// ActiveAdmin reports whether the user is an admin who can still sign in.
func (u User) ActiveAdmin() bool { return u.Role == RoleAdmin && !u.Disabled }

// HasPassword reports whether the user can sign in with a password.
func (u User) HasPassword() bool { return u.PasswordHash != "" }

// ValidateUsername checks a new username: 1–64 characters of letters, digits
// and . _ - @, so names stay readable in lists and logs. Returns validation.
func ValidateUsername(name string) error {
	if name == "" {
		return errs.Field("username", "is required")
	}
	if utf8.RuneCountInString(name) > MaxUsernameLen {
		return errs.Field("username", "must be at most %d characters", MaxUsernameLen)
	}
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-@", r)) {
			return errs.Field("username", "may contain only letters, digits and . _ - @")
		}
	}
	return nil
}

// NormalizeUsername is the form a username is stored and shown in: NFKC,
// so compatibility characters (fullwidth ａ, ligatures, superscripts) read
// as the letters they stand for.
func NormalizeUsername(name string) string { return norm.NFKC.String(name) }

// UsernameKey is what makes two usernames the same account: NFKC with full
// case folding (Unicode's NFKC_Casefold, approximated as NFKC → fold →
// NFKC), so "ａlice", "Alice" and "ALICE" are one name and a look-alike
// spelling cannot be registered next to an existing user. Uniqueness and
// sign-in compare keys.
func UsernameKey(name string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(name)))
}

// ValidatePassword checks a new password's length. Returns validation.
func ValidatePassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen {
		return errs.Field("password", "must be at least %d characters", MinPasswordLen)
	}
	if len(pw) > MaxPasswordLen {
		return errs.Field("password", "must be at most %d bytes", MaxPasswordLen)
	}
	return nil
}

// UserPatch is a partial update of a user; nil fields are left as they are.
type UserPatch struct {
	Role     *Role
	Password *string // plaintext; hashed by the service before it reaches a store
	Disabled *bool
}

// Fields names what the patch changes on u (a password is always a
// change: its value is never compared), for the audit log.
func (p UserPatch) Fields(u User) []string {
	var out []string
	if p.Role != nil && *p.Role != u.Role {
		out = append(out, "role")
	}
	if p.Disabled != nil && *p.Disabled != u.Disabled {
		out = append(out, "disabled")
	}
	if p.Password != nil {
		out = append(out, "password")
	}
	return out
}

// CheckAdminRemains enforces that an instance always keeps an active admin and
// that the bootstrap admin — the break-glass account of the ready line — is
// never disabled, demoted or deleted. before and after are the user's states
// around the change (after is nil for a delete); otherActiveAdmins counts the
// active admins other than this user. Returns conflict.
func CheckAdminRemains(before User, after *User, otherActiveAdmins int) error {
	if before.Bootstrap {
		switch {
		case after == nil:
			return errs.E(errs.Conflict, "the bootstrap admin %q cannot be deleted", before.Username)
		case after.Disabled:
			return errs.E(errs.Conflict, "the bootstrap admin %q cannot be disabled", before.Username)
		case after.Role != RoleAdmin:
			return errs.E(errs.Conflict, "the bootstrap admin %q cannot be demoted", before.Username)
		}
	}
	if before.ActiveAdmin() && (after == nil || !after.ActiveAdmin()) && otherActiveAdmins == 0 {
		return errs.E(errs.Conflict, "%q is the last active admin", before.Username)
	}
	return nil
}

// RevokesTokens reports whether a change from before to after must revoke the
// user's tokens: a disabled user keeps no live sign-in anywhere.
func RevokesTokens(before, after User) bool { return !before.Disabled && after.Disabled }

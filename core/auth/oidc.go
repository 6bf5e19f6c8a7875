package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Settings reads the admin settings single sign-on follows.
type Settings interface {
	Bool(ctx context.Context, key string) (bool, error)
}

// OIDCConfig is the single sign-on policy the operator configured.
type OIDCConfig struct {
	// Name is the provider's name on the sign-in button.
	Name string
	// AllowedDomains, when set, are the only email domains (lower case)
	// that may sign in; the provider must have verified the email.
	AllowedDomains []string
	// AdminGroups and MemberGroups map the groups claim to a role on each
	// sign-in; when MemberGroups is set, being in one of either is
	// required.
	AdminGroups, MemberGroups []string
}

// mapsGroups reports whether roles follow the groups claim.
func (c OIDCConfig) mapsGroups() bool { return len(c.AdminGroups) > 0 || len(c.MemberGroups) > 0 }

// OIDCDeps turn single sign-on on.
type OIDCDeps struct {
	Provider ports.OIDCProvider
	Store    ports.OIDCStore
	Settings Settings
	Config   OIDCConfig
}

// SignInOptions is what the sign-in page offers.
type SignInOptions struct {
	Password bool   // the password form
	OIDC     bool   // the single sign-on button
	OIDCName string // the provider's name on it
}

// SignInOptions tells the sign-in page which ways in there are.
func (s *Service) SignInOptions() SignInOptions {
	o := SignInOptions{Password: !s.passwordOff}
	if s.oidc != nil {
		o.OIDC, o.OIDCName = true, s.oidc.Config.Name
	}
	return o
}

// OIDCStart is a begun single sign-on: where to send the browser, and the
// secret the browser must carry back (a cookie) for the callback to count.
type OIDCStart struct {
	AuthorizeURL string
	Binding      string
}

// StartOIDC begins a single sign-on returning to redirectURL (the
// callback), then to the workbench path returnTo. The attempt is stored,
// so the callback completes on any replica, once. Returns not_found when
// single sign-on is off, upstream when the provider cannot be read.
func (s *Service) StartOIDC(ctx context.Context, redirectURL, returnTo string) (OIDCStart, error) {
	if s.oidc == nil {
		return OIDCStart{}, errs.E(errs.NotFound, "single sign-on is not configured on this server")
	}
	var secrets [4]string
	for i := range secrets {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return OIDCStart{}, errs.Wrap(errs.Internal, err, "sign-in entropy")
		}
		secrets[i] = base64.RawURLEncoding.EncodeToString(b[:])
	}
	now := s.clock.Now()
	a := domain.OIDCAttempt{State: secrets[0], Nonce: secrets[1], Verifier: secrets[2], BindingHash: HashToken(secrets[3]),
		RedirectURL: redirectURL, ReturnTo: safeReturn(returnTo), ExpiresAt: now.Add(domain.OIDCAttemptTTL)}
	u, err := s.oidc.Provider.AuthorizeURL(ctx, ports.OIDCAuthorize{State: a.State, Nonce: a.Nonce, Verifier: a.Verifier, RedirectURL: redirectURL})
	if err != nil {
		return OIDCStart{}, err
	}
	if err := s.oidc.Store.InsertOIDCAttempt(ctx, a, now); err != nil {
		return OIDCStart{}, storeDown(err)
	}
	return OIDCStart{AuthorizeURL: u, Binding: secrets[3]}, nil
}

// safeReturn keeps a return path inside the workbench: an absolute path,
// never another origin (//host, /\host).
func safeReturn(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "#\r\n") {
		return "/"
	}
	return p
}

// OIDCCallback is the provider's redirect back, with the binding the
// browser carried.
type OIDCCallback struct {
	State, Code string
	Error       string // the provider's refusal (error, error_description)
	Binding     string
}

// OIDCSignIn is a completed single sign-on.
type OIDCSignIn struct {
	Token    string
	User     domain.User
	ReturnTo string
}

// FinishOIDC completes a single sign-on: the attempt is taken (once), the
// code redeemed and the ID token verified, the person's account found by
// (issuer, subject), linked by verified email when an admin allows it, or
// made; then a session token is minted as a password sign-in does. Every
// refusal is forbidden and carries its reason (OIDCRefusalOf).
func (s *Service) FinishOIDC(ctx context.Context, cb OIDCCallback) (OIDCSignIn, error) {
	out, err := s.finishOIDC(ctx, cb)
	return out, s.signInOutcome(ctx, MethodOIDC, out.User, err)
}

func (s *Service) finishOIDC(ctx context.Context, cb OIDCCallback) (OIDCSignIn, error) {
	if s.oidc == nil {
		return OIDCSignIn{}, refuse(domain.RefusedProvider, "single sign-on is not configured on this server")
	}
	a, err := s.oidc.Store.TakeOIDCAttempt(ctx, cb.State, s.clock.Now())
	if errs.Is(err, errs.NotFound) || (err == nil && (cb.Binding == "" || HashToken(cb.Binding) != a.BindingHash)) {
		return OIDCSignIn{}, refuse(domain.RefusedExpired, "this sign-in expired or was started in another browser: start it again")
	}
	if err != nil {
		return OIDCSignIn{}, storeDown(err)
	}
	if cb.Error != "" {
		return OIDCSignIn{}, refuse(domain.RefusedProvider, "%s refused the sign-in: %s", s.oidc.Config.Name, cb.Error)
	}
	claims, err := s.oidc.Provider.Redeem(ctx, ports.OIDCRedeem{Code: cb.Code, Verifier: a.Verifier, RedirectURL: a.RedirectURL, Nonce: a.Nonce})
	if errs.Is(err, errs.Unauthorized) {
		return OIDCSignIn{}, refuse(domain.RefusedInvalid, "the sign-in from %s could not be verified: %s", s.oidc.Config.Name, errs.MessageOf(err))
	}
	if err != nil {
		return OIDCSignIn{}, refuse(domain.RefusedProvider, "%s could not complete the sign-in: %s", s.oidc.Config.Name, errs.MessageOf(err))
	}
	role, err := s.oidcPolicy(claims)
	if err != nil {
		return OIDCSignIn{}, err
	}
	u, err := s.oidcAccount(ctx, claims, role)
	if err != nil {
		return OIDCSignIn{}, err
	}
	if u.Disabled {
		return OIDCSignIn{User: u}, refuse(domain.RefusedDisabled, "the account %q is disabled: ask an admin to enable it", u.Username)
	}
	if role != "" && role != u.Role {
		u = s.applyRole(ctx, u, role)
	}
	token, _, err := s.issue(s.signedIn(ctx, u, MethodOIDC), u.ID, domain.TokenSession, "", nil)
	if err != nil {
		return OIDCSignIn{User: u}, err
	}
	return OIDCSignIn{Token: token, User: u, ReturnTo: a.ReturnTo}, nil
}

// oidcPolicy checks the allowed domains and groups and returns the role
// the groups give ("" when roles do not follow groups).
func (s *Service) oidcPolicy(c domain.OIDCClaims) (domain.Role, error) {
	cfg := s.oidc.Config
	if len(cfg.AllowedDomains) > 0 {
		switch {
		case c.Email == "":
			return "", refuse(domain.RefusedClaimMissing, "%s did not share your email, which this server needs to check its domain", cfg.Name)
		case !c.EmailVerified:
			return "", refuse(domain.RefusedDomain, "%s has not verified your email %s: verify it there, then sign in again", cfg.Name, c.Email)
		case !slices.Contains(cfg.AllowedDomains, c.EmailDomain()):
			return "", refuse(domain.RefusedDomain, "accounts of %s cannot sign in here: use an account of %s",
				c.EmailDomain(), strings.Join(cfg.AllowedDomains, ", "))
		}
	}
	if !cfg.mapsGroups() {
		return "", nil
	}
	in := func(groups []string) bool {
		return slices.ContainsFunc(c.Groups, func(g string) bool { return slices.Contains(groups, g) })
	}
	switch {
	case in(cfg.AdminGroups):
		return domain.RoleAdmin, nil
	case len(cfg.MemberGroups) == 0 || in(cfg.MemberGroups):
		return domain.RoleMember, nil
	case !c.HasGroups:
		return "", refuse(domain.RefusedClaimMissing, "%s did not say which groups you are in, which this server needs: ask your admin", cfg.Name)
	}
	return "", refuse(domain.RefusedGroup, "you are not in a group allowed to sign in here: ask your admin")
}

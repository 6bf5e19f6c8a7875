package auth

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// A return path stays inside the workbench: another origin, a fragment or
// a header break reads as the root.
func TestSafeReturnKeepsThePathInside(t *testing.T) {
	for in, want := range map[string]string{
		"/s/abc": "/s/abc", "/settings?tab=x": "/settings?tab=x", "": "/", "https://evil.test/": "/",
		"//evil.test/": "/", "/\\evil.test": "/", "/a#token=x": "/", "/a\r\nSet-Cookie: x": "/", "relative": "/",
	} {
		if got := safeReturn(in); got != want {
			t.Errorf("safeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}

// A new account's name comes from the preferred username, else the
// email, else the subject, kept to what a username may hold.
func TestOIDCUsernameFromTheClaims(t *testing.T) {
	for _, tc := range []struct {
		c    domain.OIDCClaims
		want string
	}{
		{domain.OIDCClaims{PreferredUsername: "Ann", Email: "ann@example.com", Subject: "1"}, "Ann"},
		{domain.OIDCClaims{PreferredUsername: "Ann Lee", Subject: "1"}, "Ann-Lee"},
		{domain.OIDCClaims{Email: "ann@example.com", Subject: "1"}, "ann@example.com"},
		{domain.OIDCClaims{PreferredUsername: "!!!", Subject: "abc"}, "user-abc"},
		{domain.OIDCClaims{Subject: "x/y"}, "user-x-y"},
	} {
		if got := oidcUsername(tc.c); got != tc.want {
			t.Errorf("oidcUsername(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// claimsProvider answers every redemption with the claims it holds: the
// provider's side is covered against a real one in the API tests; here
// only the service's rules are.
type claimsProvider struct{ claims domain.OIDCClaims }

func (p *claimsProvider) Issuer() string { return p.claims.Issuer }
func (p *claimsProvider) AuthorizeURL(_ context.Context, a ports.OIDCAuthorize) (string, error) {
	return "https://idp.example/auth?state=" + a.State, nil
}
func (p *claimsProvider) Redeem(context.Context, ports.OIDCRedeem) (domain.OIDCClaims, error) {
	return p.claims, nil
}

type noLinking struct{}

func (noLinking) Bool(context.Context, string) (bool, error) { return false, nil }

// The groups never demote the last active admin: an account made admin
// by its groups, the only admin left, signs in with groups that say
// member, and keeps its role (and is signed in).
func TestOIDCGroupsNeverDemoteTheLastActiveAdmin(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	prov := &claimsProvider{claims: domain.OIDCClaims{Issuer: "https://idp.example", Subject: "s1", PreferredUsername: "boss",
		Groups: []string{"admins"}, HasGroups: true}}
	svc, err := New(Deps{Users: store, Tokens: store, IDs: &countingIDs{}, Clock: porttest.NewClock(time.Now()),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Params: cheapPasswords,
		OIDC: &OIDCDeps{Provider: prov, Store: store, Settings: noLinking{},
			Config: OIDCConfig{Name: "IdP", AdminGroups: []string{"admins"}, MemberGroups: []string{"staff"}}}})
	if err != nil {
		t.Fatal(err)
	}
	signIn := func() domain.User {
		t.Helper()
		start, err := svc.StartOIDC(ctx, "https://agents.example/api/v1/auth/oidc/callback", "/")
		if err != nil {
			t.Fatal(err)
		}
		state := strings.TrimPrefix(start.AuthorizeURL, "https://idp.example/auth?state=")
		in, err := svc.FinishOIDC(ctx, OIDCCallback{State: state, Code: "c", Binding: start.Binding})
		if err != nil {
			t.Fatal(err)
		}
		return in.User
	}
	if u := signIn(); u.Role != domain.RoleAdmin {
		t.Fatalf("the admin group made %+v", u)
	}
	prov.claims.Groups = []string{"staff"}
	if u := signIn(); u.Role != domain.RoleAdmin {
		t.Fatalf("the last active admin was demoted: %+v", u)
	}
}

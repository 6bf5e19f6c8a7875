package main

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// meOf is the account a token signs in.
func (s *ssoServer) meOf(token string) httpapi.UserView {
	s.t.Helper()
	var me httpapi.UserView
	s.call("GET", "/api/v1/auth/me", token, nil).want(s.t, 200).decode(s.t, &me)
	return me
}

// The groups claim sets the role on every sign-in: an admin group makes
// an admin (again, after an admin demoted them), a member group a member;
// with member groups set, someone in none of them is refused, and so is a
// token with no groups claim at all.
func TestOIDCGroupsMapToRoles(t *testing.T) {
	t.Parallel()
	boss := opUser{Username: "boss", Password: "boss-password", Email: "boss@example.com", EmailVerified: true, Groups: groups("staff", "admins")}
	dev := opUser{Username: "dev", Password: "dev-password", Email: "dev@example.com", EmailVerified: true, Groups: groups("staff")}
	guest := opUser{Username: "guest", Password: "guest-password", Email: "guest@example.com", EmailVerified: true, Groups: groups("visitors")}
	bare := opUser{Username: "bare", Password: "bare-password", Email: "bare@example.com", EmailVerified: true}
	s := startSSO(t, []opUser{boss, dev, guest, bare}, func(c *config) { c.SSO.Admins, c.SSO.Members = "admins", "staff, contractors" })

	token, refusal := s.signIn("boss", "boss-password")
	if token == "" {
		t.Fatalf("boss was refused: %s", refusal)
	}
	me := s.meOf(token)
	if me.Role != "admin" {
		t.Fatalf("an admin group made %+v", me)
	}
	// An admin demotes boss; the provider still says admins: the next
	// sign-in makes them an admin again.
	s.call("PATCH", "/api/v1/auth/users/"+me.ID, s.admin, map[string]any{"role": "member"}).want(t, 204)
	if again, _ := s.signIn("boss", "boss-password"); s.meOf(again).Role != "admin" {
		t.Fatal("the groups claim did not make boss an admin again")
	}
	// The log holds the admin's demotion and the claim's promotion, each
	// with its actor.
	var changes []string
	for _, r := range s.auditLog("&action=user.update&object=" + me.ID) {
		changes = append(changes, r.ActorName+":"+strings.Join(r.Fields, ","))
	}
	if !slices.Equal(changes, []string{"boss:role", "admin:role"}) {
		t.Fatalf("the role changes recorded: %v", changes)
	}
	if token, refusal = s.signIn("dev", "dev-password"); token == "" || s.meOf(token).Role != "member" {
		t.Fatalf("a member group: token %q, refusal %q", token, refusal)
	}
	if token, refusal = s.signIn("guest", "guest-password"); token != "" || refusal != "group" {
		t.Fatalf("in no allowed group: token %q, refusal %q", token, refusal)
	}
	if token, refusal = s.signIn("bare", "bare-password"); token != "" || refusal != "claim_missing" {
		t.Fatalf("no groups claim: token %q, refusal %q", token, refusal)
	}
}

// The groups never demote the bootstrap admin or the last active admin:
// roles follow the claim, the admin rules hold. Here the only admin
// besides the bootstrap one signs in as a member, and is one.
func TestOIDCGroupsMayDemoteAnAdminWhoIsNotTheLast(t *testing.T) {
	t.Parallel()
	boss := opUser{Username: "boss", Password: "boss-password", Email: "boss@example.com", EmailVerified: true, Groups: groups("staff")}
	s := startSSO(t, []opUser{boss}, func(c *config) { c.SSO.Admins, c.SSO.Members = "admins", "staff" })
	token, _ := s.signIn("boss", "boss-password")
	me := s.meOf(token)
	s.call("PATCH", "/api/v1/auth/users/"+me.ID, s.admin, map[string]any{"role": "admin"}).want(t, 204)
	if again, refusal := s.signIn("boss", "boss-password"); again == "" || s.meOf(again).Role != "member" {
		t.Fatalf("the groups did not make boss a member: %s", refusal)
	}
	if s.meOf(s.admin).Role != "admin" {
		t.Fatal("the bootstrap admin lost its role")
	}
}

// With password sign-in off, a password is refused (403, saying how to
// sign in instead), while single sign-on, the bootstrap admin's token
// (recovery) and personal access tokens still sign in.
func TestOIDCPasswordLoginOffKeepsTokens(t *testing.T) {
	t.Parallel()
	s := startSSO(t, []opUser{ann}, func(c *config) { c.SSO.PasswordLoginOff = true })
	var methods httpapi.SignInMethodsView
	s.call("GET", "/api/v1/auth/methods", "", nil).want(t, 200).decode(t, &methods)
	if methods.Password || !methods.OIDC {
		t.Fatalf("sign-in methods %+v", methods)
	}
	s.createUser("carol", "password-of-carol", "member")
	d := s.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "carol", "password": "password-of-carol"}).
		wantErr(t, 403, "forbidden")
	if d.Message != "password sign-in is turned off on this server: sign in with Test IdP" {
		t.Fatalf("the refusal says %q", d.Message)
	}
	if s.meOf(s.admin).Username != "admin" {
		t.Fatal("the bootstrap admin's token no longer signs in")
	}
	var pat httpapi.CreatedToken
	s.call("POST", "/api/v1/auth/tokens", s.admin, map[string]any{"name": "script"}).want(t, 201).decode(t, &pat)
	if s.meOf(pat.Token).Username != "admin" {
		t.Fatal("a personal access token no longer signs in")
	}
	if token, refusal := s.signIn("ann", "ann-password"); token == "" {
		t.Fatalf("single sign-on was refused: %s", refusal)
	}
}

// A first sign-in joins the local account named by the email only when
// an admin allowed it AND the provider verified the email; otherwise it
// makes a new account.
func TestOIDCLinksAVerifiedEmailOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	early := opUser{Username: "early", Password: "early-password", Email: "early@example.com", EmailVerified: true}
	lin := opUser{Username: "lin", Password: "lin-password", Email: "lin@example.com", EmailVerified: true}
	unv := opUser{Username: "unv", Password: "unv-password", Email: "unv@example.com", EmailVerified: false}
	s := startSSO(t, []opUser{early, lin, unv}, nil)
	local := map[string]string{}
	for _, u := range []opUser{early, lin, unv} {
		local[u.Username] = s.createUser(u.Email, "password-of-"+u.Username, "member")
	}
	token, _ := s.signIn("early", "early-password")
	if me := s.meOf(token); me.ID == local["early"] || me.Username != "early" {
		t.Fatalf("linked with the setting off: %+v", me)
	}
	s.call("PUT", "/api/v1/settings/oidc_link_verified_email", s.admin, map[string]string{"value": "true"}).want(t, 200)
	token, _ = s.signIn("lin", "lin-password")
	if me := s.meOf(token); me.ID != local["lin"] {
		t.Fatalf("a verified email did not join its account: %+v", me)
	}
	token, _ = s.signIn("unv", "unv-password")
	if me := s.meOf(token); me.ID == local["unv"] {
		t.Fatalf("an unverified email joined its account: %+v", me)
	}
	// Linked once, the identity keeps its account.
	token, _ = s.signIn("lin", "lin-password")
	if me := s.meOf(token); me.ID != local["lin"] {
		t.Fatalf("the linked identity's next sign-in: %+v", me)
	}
}

// Two replicas on one database share the attempt: a sign-in started on
// one completes on the other (the provider sends the browser back to the
// first's callback; a load balancer hands it to the second).
func TestOIDCTwoReplicasShareTheAttempt(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t, "replica suite on Postgres")
	addrA, addrB := freeAddr(t), freeAddr(t)
	baseA, baseB := "http://"+addrA, "http://"+addrB
	issuer := startOP(t, []string{baseA + "/api/v1/auth/oidc/callback", baseB + "/api/v1/auth/oidc/callback"}, []opUser{ann})
	replica := func(addr string) *harness {
		cfg := testConfig(t)
		cfg.Addr, cfg.BaseURL, cfg.DatabaseURL = addr, "http://"+addr, dbURL
		cfg.SSO = ssoConfig{Issuer: issuer, ClientID: opClientID, Secret: opClientSecret, Name: "Test IdP"}
		return startServer(t, cfg)
	}
	a := replica(addrA)
	b := replica(addrB)

	br := newSSOBrowser(t)
	br.stopAt = func(u *url.URL) bool { return u.Host == addrA && u.Path == "/api/v1/auth/oidc/callback" }
	page, id := br.toProvider(baseA)
	redirect := br.login(page, id, "ann", "ann-password")
	br.stopAt = nil
	redirect.Host = addrB
	token, refusal := landing(t, br.get(redirect.String()))
	if token == "" {
		t.Fatalf("the callback on the other replica was refused: %s", refusal)
	}
	var onA, onB httpapi.UserView
	a.call("GET", "/api/v1/auth/me", token, nil).want(t, 200).decode(t, &onA)
	b.call("GET", "/api/v1/auth/me", token, nil).want(t, 200).decode(t, &onB)
	if onA.ID != onB.ID || onA.Username != "ann" {
		t.Fatalf("the replicas disagree on the account: %+v, %+v", onA, onB)
	}
	// The attempt was used up on B: the same redirect on A is refused.
	redirect.Host = addrA
	if token, refusal := landing(t, br.get(redirect.String())); token != "" || refusal != "expired" {
		t.Fatalf("the attempt used on B, replayed on A: token %q, refusal %q", token, refusal)
	}
}

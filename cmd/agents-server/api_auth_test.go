package main

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

func TestLoginLogoutAndMe(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", h.admin, nil).want(t, 200).decode(t, &me)
	if me.Username != "admin" || me.Role != "admin" || !me.Bootstrap || me.HasPassword {
		t.Fatalf("bootstrap admin = %+v", me)
	}
	// The bootstrap admin has no password until one is set.
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": "whatever-it-is"}).
		wantErr(t, 401, "unauthorized")
	h.call("PATCH", "/api/v1/auth/users/"+me.ID, h.admin, map[string]string{"password": "a-long-admin-password"}).want(t, 204)

	var lr httpapi.LoginResponse
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "ADMIN", "password": "a-long-admin-password"}).
		want(t, 200).decode(t, &lr)
	if !strings.HasPrefix(lr.Token, "ags_s_") || lr.User.ID != me.ID || !lr.User.HasPassword {
		t.Fatalf("login = %+v", lr)
	}
	// Every failure reads the same.
	a := h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": "wrong-password"}).envelope(t)
	b := h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "nobody", "password": "wrong-password"}).envelope(t)
	if a.Code != b.Code || a.Message != b.Message {
		t.Fatalf("failures differ: %+v vs %+v", a, b)
	}
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "admin"}).wantErr(t, 401, "unauthorized")

	h.call("GET", "/api/v1/auth/me", lr.Token, nil).want(t, 200)
	h.call("POST", "/api/v1/auth/logout", lr.Token, nil).want(t, 204)
	h.call("GET", "/api/v1/auth/me", lr.Token, nil).wantErr(t, 401, "unauthorized")
	h.call("GET", "/api/v1/auth/me", h.admin, nil).want(t, 200) // other tokens live on
}

func TestPersonalAccessTokens(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("pat")

	var created httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", member, map[string]any{"name": "ci", "expires_in_days": 30}).
		want(t, 201).decode(t, &created)
	if !strings.HasPrefix(created.Token, "ags_p_") || created.Kind != "pat" || created.ExpiresAt == nil ||
		!strings.HasPrefix(created.Token, strings.TrimSuffix(created.Hint, "…")) {
		t.Fatalf("created = %+v", created)
	}
	var forever httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", member, map[string]any{"name": "forever"}).want(t, 201).decode(t, &forever)
	if forever.ExpiresAt != nil {
		t.Fatalf("expires_in_days 0 expires at %v", forever.ExpiresAt)
	}
	h.call("POST", "/api/v1/auth/tokens", member, map[string]any{"name": ""}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/auth/tokens", member, map[string]any{"name": "x", "expires_in_days": -1}).wantErr(t, 400, "validation")

	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", created.Token, nil).want(t, 200).decode(t, &me)
	if me.Username != "pat" {
		t.Fatalf("the PAT signs in as %q", me.Username)
	}
	list := h.call("GET", "/api/v1/auth/tokens", member, nil).want(t, 200)
	if strings.Contains(string(list.Body), created.Token) {
		t.Fatal("the token list shows a token's text")
	}
	var tokens []httpapi.TokenView
	list.decode(t, &tokens)
	if len(tokens) != 3 { // the login session and two PATs
		t.Fatalf("%d tokens listed: %+v", len(tokens), tokens)
	}
	current := 0
	for _, tk := range tokens {
		if tk.Current {
			current++
			if tk.Kind != "session" {
				t.Fatalf("current token is a %s", tk.Kind)
			}
		}
	}
	if current != 1 {
		t.Fatalf("%d tokens marked current", current)
	}
	// Someone else's token reads as absent.
	h.call("DELETE", "/api/v1/auth/tokens/"+created.ID, h.admin, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/auth/tokens/"+created.ID, member, nil).want(t, 204)
	h.call("GET", "/api/v1/auth/me", created.Token, nil).wantErr(t, 401, "unauthorized")
	h.call("DELETE", "/api/v1/auth/tokens/"+created.ID, member, nil).wantErr(t, 404, "not_found")
}

func TestUserAdministrationIsAdminOnly(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("mel")
	var users []httpapi.UserView
	h.call("GET", "/api/v1/auth/users", h.admin, nil).want(t, 200).decode(t, &users)
	if len(users) != 2 {
		t.Fatalf("%d users", len(users))
	}
	melID := users[1].ID

	h.call("GET", "/api/v1/auth/users", member, nil).wantErr(t, 403, "forbidden")
	h.call("POST", "/api/v1/auth/users", member, map[string]string{"username": "x", "password": "password-x"}).wantErr(t, 403, "forbidden")
	h.call("PATCH", "/api/v1/auth/users/"+melID, member, map[string]string{"role": "admin"}).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/auth/users/"+users[0].ID, member, nil).wantErr(t, 403, "forbidden")

	// Validation and conflicts.
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "MEL", "password": "password-mel2"}).wantErr(t, 409, "conflict")
	// Usernames are one account per NFKC case-folded name: a fullwidth or
	// case-folded look-alike is taken, and signs in as the original.
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "ｍｅｌ", "password": "password-mel2"}).wantErr(t, 409, "conflict")
	var strasse httpapi.UserView
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "Straße", "password": "password-str"}).want(t, 201).decode(t, &strasse)
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "STRASSE", "password": "password-str2"}).wantErr(t, 409, "conflict")
	var fw httpapi.UserView
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "ｆｕｌｌ", "password": "password-full"}).want(t, 201).decode(t, &fw)
	if fw.Username != "full" {
		t.Fatalf("a fullwidth name is stored as %q, want its NFKC form", fw.Username)
	}
	var lr httpapi.LoginResponse
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "strasse", "password": "password-str"}).want(t, 200).decode(t, &lr)
	if lr.User.ID != strasse.ID {
		t.Fatalf("strasse signed in as %+v", lr.User)
	}
	h.call("DELETE", "/api/v1/auth/users/"+strasse.ID, h.admin, nil).want(t, 204)
	h.call("DELETE", "/api/v1/auth/users/"+fw.ID, h.admin, nil).want(t, 204)
	d := h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "ok", "password": "short"}).wantErr(t, 400, "validation")
	if d.Fields["password"] == "" {
		t.Fatalf("password error not on the field: %+v", d)
	}
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "bad name", "password": "password-ok"}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": "ok", "password": "password-ok", "role": "owner"}).wantErr(t, 400, "validation")
	h.call("PATCH", "/api/v1/auth/users/"+melID, h.admin, map[string]string{}).wantErr(t, 400, "validation")
	h.call("PATCH", "/api/v1/auth/users/"+melID, h.admin, map[string]string{"role": "root"}).wantErr(t, 400, "validation")
	h.call("PATCH", "/api/v1/auth/users/no-such-user", h.admin, map[string]string{"role": "admin"}).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/auth/users/no-such-user", h.admin, nil).wantErr(t, 404, "not_found")

	// Promotion gives admin powers.
	h.call("PATCH", "/api/v1/auth/users/"+melID, h.admin, map[string]string{"role": "admin"}).want(t, 204)
	h.call("GET", "/api/v1/auth/users", member, nil).want(t, 200)
	// The bootstrap admin stays an active admin, whoever asks.
	h.call("PATCH", "/api/v1/auth/users/"+users[0].ID, member, map[string]string{"role": "member"}).wantErr(t, 409, "conflict")
	h.call("PATCH", "/api/v1/auth/users/"+users[0].ID, member, map[string]any{"disabled": true}).wantErr(t, 409, "conflict")
	h.call("DELETE", "/api/v1/auth/users/"+users[0].ID, member, nil).wantErr(t, 409, "conflict")
	// Nobody disables or deletes themselves.
	h.call("PATCH", "/api/v1/auth/users/"+melID, member, map[string]any{"disabled": true}).wantErr(t, 409, "conflict")
	h.call("DELETE", "/api/v1/auth/users/"+melID, member, nil).wantErr(t, 409, "conflict")
}

func TestDisablingAUserRevokesTheirTokens(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	id := h.createUser("dee", "password-dee", "member")
	session := h.login("dee", "password-dee")
	var pat httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", session, map[string]any{"name": "script"}).want(t, 201).decode(t, &pat)

	h.call("PATCH", "/api/v1/auth/users/"+id, h.admin, map[string]any{"disabled": true}).want(t, 204)
	h.call("GET", "/api/v1/auth/me", session, nil).wantErr(t, 401, "unauthorized")
	h.call("GET", "/api/v1/auth/me", pat.Token, nil).wantErr(t, 401, "unauthorized")
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "dee", "password": "password-dee"}).wantErr(t, 401, "unauthorized")

	// Re-enabling does not bring the old tokens back.
	h.call("PATCH", "/api/v1/auth/users/"+id, h.admin, map[string]any{"disabled": false}).want(t, 204)
	h.call("GET", "/api/v1/auth/me", pat.Token, nil).wantErr(t, 401, "unauthorized")
	fresh := h.login("dee", "password-dee")
	h.call("GET", "/api/v1/auth/me", fresh, nil).want(t, 200)

	h.call("DELETE", "/api/v1/auth/users/"+id, h.admin, nil).want(t, 204)
	h.call("GET", "/api/v1/auth/me", fresh, nil).wantErr(t, 401, "unauthorized")
}

func TestAgentsTokenFixesTheBootstrapToken(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "ci-fixed-token-0123456789"
	h := startServer(t, cfg)
	if h.admin != cfg.Token || h.app.ReadyLine() != "agents-server ready: "+h.base+"/#token="+cfg.Token {
		t.Fatalf("ready line %q", h.app.ReadyLine())
	}

	h.call("GET", "/api/v1/auth/me", cfg.Token, nil).want(t, 200)
	h.stop()

	// A new value replaces the old one. Behind a proxy (--base-url), the
	// link is on the origin people reach.
	cfg.Token, cfg.BaseURL = "ci-fixed-token-rotated-000", "https://agents.example.com"
	h2 := startServer(t, cfg)
	if got := h2.app.ReadyLine(); got != "agents-server ready: https://agents.example.com/#token="+cfg.Token {
		t.Fatalf("ready line with --base-url %q", got)
	}
	h2.call("GET", "/api/v1/auth/me", cfg.Token, nil).want(t, 200)
	h2.call("GET", "/api/v1/auth/me", "ci-fixed-token-0123456789", nil).wantErr(t, 401, "unauthorized")
	h2.stop()

	// Without it, the fixed token is revoked and a launch token is minted.
	cfg.Token = ""
	h3 := startServer(t, cfg)
	if !strings.HasPrefix(h3.admin, "ags_l_") {
		t.Fatalf("launch token %q", h3.admin)
	}
	h3.call("GET", "/api/v1/auth/me", "ci-fixed-token-rotated-000", nil).wantErr(t, 401, "unauthorized")
	h3.call("GET", "/api/v1/auth/me", h3.admin, nil).want(t, 200)
}

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// A refused single sign-on lands on the sign-in page with its reason and
// signs no one in; what it refused for is the provider's word (an email
// domain, groups) or the account's standing (disabled).

// An email of a domain not allowed is refused, whoever the provider says
// the person is; an allowed one whose email the provider has not
// verified is refused too.
func TestOIDCRefusesAnEmailDomainNotAllowed(t *testing.T) {
	t.Parallel()
	eve := opUser{Username: "eve", Password: "eve-password", Email: "eve@elsewhere.test", EmailVerified: true}
	una := opUser{Username: "una", Password: "una-password", Email: "una@example.com", EmailVerified: false}
	s := startSSO(t, []opUser{ann, eve, una}, func(c *config) { c.SSO.Domains = "Example.com, example.org" })
	for _, u := range []opUser{eve, una} {
		if token, refusal := s.signIn(u.Username, u.Password); token != "" || refusal != "domain" {
			t.Fatalf("%s's sign-in: token %q, refusal %q; want refused for the domain", u.Username, token, refusal)
		}
	}
	if token, refusal := s.signIn("ann", "ann-password"); token == "" {
		t.Fatalf("ann, of an allowed domain, was refused: %s", refusal)
	}
	var users []httpapi.UserView
	s.call("GET", "/api/v1/auth/users", s.admin, nil).want(t, 200).decode(t, &users)
	if len(users) != 2 {
		t.Fatalf("refused sign-ins made accounts: %+v", users)
	}
	// The audit log holds both refusals, with their reasons, and ann's
	// sign-in, each by single sign-on from the browser's address.
	var refused, accepted int
	for _, r := range s.auditLog("&action=signin") {
		switch {
		case r.Method != "oidc" || r.Address != "127.0.0.1":
			t.Fatalf("a sign-in record %+v", r)
		case r.Outcome == "failure" && strings.Contains(r.Reason, "elsewhere.test") || strings.Contains(r.Reason, "not verified"):
			refused++
		case r.Outcome == "success" && r.ActorName == "ann" && r.ObjectName == "ann":
			accepted++
		}
	}
	if refused != 2 || accepted != 1 {
		t.Fatalf("the log holds %d refused and %d accepted sign-ins; want 2 and 1", refused, accepted)
	}
}

// A disabled account is refused at its next sign-in, though the provider
// signs the person in.
func TestOIDCRefusesADisabledAccount(t *testing.T) {
	t.Parallel()
	s := startSSO(t, []opUser{ann}, nil)
	token, _ := s.signIn("ann", "ann-password")
	var me httpapi.UserView
	s.call("GET", "/api/v1/auth/me", token, nil).want(t, 200).decode(t, &me)
	s.call("PATCH", "/api/v1/auth/users/"+me.ID, s.admin, map[string]any{"disabled": true}).want(t, 204)
	if token, refusal := s.signIn("ann", "ann-password"); token != "" || refusal != "disabled" {
		t.Fatalf("a disabled account's sign-in: token %q, refusal %q", token, refusal)
	}
	s.call("PATCH", "/api/v1/auth/users/"+me.ID, s.admin, map[string]any{"disabled": false}).want(t, 204)
	if token, refusal := s.signIn("ann", "ann-password"); token == "" {
		t.Fatalf("the enabled account was refused: %s", refusal)
	}
}

// tamperIDTokens changes the payload of every ID token the provider's
// token endpoint answers, keeping its signature: what a forged or altered
// token looks like to the server.
type tamperIDTokens struct{ next http.RoundTripper }

func (tt tamperIDTokens) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tt.next.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/token") || resp.StatusCode != 200 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var tok map[string]any
	if err := json.Unmarshal(body, &tok); err != nil {
		return nil, err
	}
	if idt, ok := tok["id_token"].(string); ok {
		parts := strings.Split(idt, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			return nil, err
		}
		var claims map[string]any
		if err := json.Unmarshal(payload, &claims); err != nil {
			return nil, err
		}
		claims["sub"] = "someone-else"
		payload, _ = json.Marshal(claims)
		parts[1] = base64.RawURLEncoding.EncodeToString(payload)
		tok["id_token"] = strings.Join(parts, ".")
	}
	body, _ = json.Marshal(tok)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// An ID token altered on its way from the provider fails verification
// against the provider's keys: refused, no account made.
func TestOIDCRefusesATamperedIDToken(t *testing.T) {
	t.Parallel()
	s := startSSO(t, []opUser{ann}, func(c *config) {
		c.SSO.HTTP = &http.Client{Transport: tamperIDTokens{next: http.DefaultTransport}}
	})
	if token, refusal := s.signIn("ann", "ann-password"); token != "" || refusal != "invalid" {
		t.Fatalf("a tampered ID token: token %q, refusal %q", token, refusal)
	}
	var users []httpapi.UserView
	s.call("GET", "/api/v1/auth/users", s.admin, nil).want(t, 200).decode(t, &users)
	if len(users) != 1 {
		t.Fatalf("a tampered token made an account: %+v", users)
	}
	if !strings.Contains(s.logs.String(), "failed verification") {
		t.Fatalf("the log does not say the ID token failed verification:\n%s", s.logs.String())
	}
}

// A callback is good once, and only in the browser that started it: the
// same redirect replayed, or arriving in another browser, is refused.
func TestOIDCCallbackIsOneUseInTheStartingBrowser(t *testing.T) {
	t.Parallel()
	s := startSSO(t, []opUser{ann}, nil)
	callback := s.base + "/api/v1/auth/oidc/callback"
	stopAtCallback := func(b *ssoBrowser) {
		b.stopAt = func(u *url.URL) bool { return strings.HasPrefix(u.String(), callback) }
	}
	b := newSSOBrowser(t)
	stopAtCallback(b)
	page, id := b.toProvider(s.base)
	redirect := b.login(page, id, "ann", "ann-password")
	b.stopAt = nil
	// Another browser (no binding cookie) brings the redirect: refused,
	// and the attempt is spent.
	other := newSSOBrowser(t)
	if token, refusal := landing(t, other.get(redirect.String())); token != "" || refusal != "expired" {
		t.Fatalf("the redirect in another browser: token %q, refusal %q", token, refusal)
	}
	if token, refusal := landing(t, b.get(redirect.String())); token != "" || refusal != "expired" {
		t.Fatalf("the spent redirect in the starting browser: token %q, refusal %q", token, refusal)
	}
	// A fresh one in the same browser completes, once.
	stopAtCallback(b)
	page, id = b.toProvider(s.base)
	redirect = b.login(page, id, "ann", "ann-password")
	b.stopAt = nil
	if token, refusal := landing(t, b.get(redirect.String())); token == "" {
		t.Fatalf("the sign-in was refused: %s", refusal)
	}
	if token, refusal := landing(t, b.get(redirect.String())); token != "" || refusal != "expired" {
		t.Fatalf("the redirect replayed: token %q, refusal %q", token, refusal)
	}
}

package chatgpt_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/chatgpt"
	"github.com/agents-server/agents-server/adapters/chatgpt/chatgptdouble"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// signIn runs the flow against the double: the authorize URL, the
// person's consent, the code redeemed with the verifier.
func signIn(t *testing.T, a *chatgpt.Auth, verifier string) string {
	t.Helper()
	u := a.AuthorizeURL("state-1", verifier)
	cb, err := chatgptdouble.Consent(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := url.Parse(cb)
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Query().Get("code")
}

func TestAuthorizeExchangeRefreshAndRevoke(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{AccessTTL: 10 * time.Minute})
	t.Cleanup(d.Close)
	a := chatgpt.New(chatgpt.Options{Issuer: d.Issuer()})
	ctx := context.Background()

	u, _ := url.Parse(a.AuthorizeURL("s", "v"))
	q := u.Query()
	if q.Get("redirect_uri") != ports.ChatGPTRedirectURI || q.Get("client_id") != chatgpt.ClientID ||
		q.Get("code_challenge_method") != "S256" || !strings.Contains(q.Get("scope"), "offline_access") {
		t.Fatalf("authorize URL %s", u)
	}

	verifier := strings.Repeat("v", 43)
	code := signIn(t, a, verifier)
	if _, err := a.Exchange(ctx, code, strings.Repeat("w", 43)); !errs.Is(err, errs.Upstream) || !strings.Contains(err.Error(), "code_verifier") {
		t.Fatalf("exchange with another verifier: %v", err)
	}
	code = signIn(t, a, verifier)
	tok, err := a.Exchange(ctx, code, verifier)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccountID != "acct_double" || tok.Email != "ann@example.com" || tok.Plan != "plus" || tok.RefreshToken == "" ||
		time.Until(tok.ExpiresAt) < 9*time.Minute || time.Until(tok.ExpiresAt) > 11*time.Minute {
		t.Fatalf("token = %+v", tok)
	}
	if _, err := a.Exchange(ctx, code, verifier); err == nil {
		t.Fatal("a code redeemed twice")
	}

	next, err := a.Refresh(ctx, tok.RefreshToken)
	if err != nil || next.AccessToken == tok.AccessToken || next.RefreshToken == tok.RefreshToken || next.AccountID != "acct_double" {
		t.Fatalf("refresh = %+v, %v", next, err)
	}
	// The refresh token rotated: the old one is refused for good.
	if _, err := a.Refresh(ctx, tok.RefreshToken); !errors.Is(err, ports.ErrChatGPTRevoked) || !strings.Contains(err.Error(), "refresh_token_reused") {
		t.Fatalf("reused refresh: %v", err)
	}
	d.RevokeAll()
	if _, err := a.Refresh(ctx, next.RefreshToken); !errors.Is(err, ports.ErrChatGPTRevoked) {
		t.Fatalf("revoked refresh: %v", err)
	}
	if d.Refreshes() != 1 {
		t.Fatalf("refreshes = %d", d.Refreshes())
	}
	// An auth server that cannot be reached is no revocation.
	gone := chatgpt.New(chatgpt.Options{Issuer: "http://127.0.0.1:1"})
	if _, err := gone.Refresh(ctx, next.RefreshToken); errors.Is(err, ports.ErrChatGPTRevoked) || !errs.Is(err, errs.Upstream) {
		t.Fatalf("unreachable: %v", err)
	}
}

// Revoke posts the refresh token to the issuer's revocation endpoint as
// the Codex CLI's logout does: the token no longer refreshes. A refused
// request or an auth server out of reach is an upstream error; an empty
// token sends nothing.
func TestRevokeEndsTheSignIn(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	a := chatgpt.New(chatgpt.Options{Issuer: d.Issuer()})
	ctx := context.Background()
	verifier := strings.Repeat("r", 43)
	tok, err := a.Exchange(ctx, signIn(t, a, verifier), verifier)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, tok.RefreshToken); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, err := a.Refresh(ctx, tok.RefreshToken); !errors.Is(err, ports.ErrChatGPTRevoked) {
		t.Fatalf("a revoked refresh token refreshed: %v", err)
	}
	if err := a.Revoke(ctx, ""); err != nil || d.Revocations() != 1 {
		t.Fatalf("an empty token: %v, %d revocations, want 1", err, d.Revocations())
	}
	stranger := chatgpt.New(chatgpt.Options{Issuer: d.Issuer(), ClientID: "app_someone_else"})
	if err := stranger.Revoke(ctx, tok.RefreshToken); !errs.Is(err, errs.Upstream) || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("an unknown client: %v", err)
	}
	gone := chatgpt.New(chatgpt.Options{Issuer: "http://127.0.0.1:1"})
	if err := gone.Revoke(ctx, tok.RefreshToken); !errs.Is(err, errs.Upstream) || strings.Contains(err.Error(), tok.RefreshToken) {
		t.Fatalf("unreachable: %v", err)
	}
}

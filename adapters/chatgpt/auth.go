// Package chatgpt signs providers in with a ChatGPT account: OpenAI's auth
// server as the Codex CLI uses it (authorization code with PKCE, a public
// client, the redirect fixed to the CLI's loopback address), on
// golang.org/x/oauth2. The Codex backend bridge itself is in
// adapters/llm/openai; the local doubles of both are in chatgptdouble.
package chatgpt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// DefaultIssuer is OpenAI's auth server.
const DefaultIssuer = "https://auth.openai.com"

// ClientID is the Codex CLI's public OAuth client, the one ChatGPT plans
// authorize for Codex use.
const ClientID = "app_EMoamEEZ73f0CkXaXp7hrann"

// scopes are what the Codex CLI asks for; offline_access brings the
// refresh token.
var scopes = []string{"openid", "profile", "email", "offline_access"}

// Options configure an Auth.
type Options struct {
	Issuer   string       // "" = DefaultIssuer
	ClientID string       // "" = ClientID
	HTTP     *http.Client // nil = http.DefaultClient (honours HTTPS_PROXY)
}

// Auth is a ports.ChatGPTAuth.
type Auth struct {
	cfg       oauth2.Config
	http      *http.Client
	revokeURL string
}

var _ ports.ChatGPTAuth = (*Auth)(nil)

// New returns an Auth.
func New(o Options) *Auth {
	issuer := strings.TrimRight(o.Issuer, "/")
	if issuer == "" {
		issuer = DefaultIssuer
	}
	id := o.ClientID
	if id == "" {
		id = ClientID
	}
	hc := o.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Auth{http: hc, revokeURL: issuer + "/oauth/revoke", cfg: oauth2.Config{
		ClientID:    id,
		Endpoint:    oauth2.Endpoint{AuthURL: issuer + "/oauth/authorize", TokenURL: issuer + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: ports.ChatGPTRedirectURI,
		Scopes:      scopes,
	}}
}

// AuthorizeURL implements ports.ChatGPTAuth, with the parameters the Codex
// CLI sends: the simplified flow, and the organizations in the ID token.
func (a *Auth) AuthorizeURL(state, verifier string) string {
	return a.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("id_token_add_organizations", "true"),
		oauth2.SetAuthURLParam("codex_cli_simplified_flow", "true"),
		oauth2.SetAuthURLParam("originator", "codex_cli_rs"))
}

// Exchange implements ports.ChatGPTAuth.
func (a *Auth) Exchange(ctx context.Context, code, verifier string) (domain.ChatGPTToken, error) {
	t, err := a.cfg.Exchange(a.ctx(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return domain.ChatGPTToken{}, errs.Wrap(errs.Upstream, err, "the ChatGPT sign-in could not be redeemed: %s", describe(err))
	}
	return token(t)
}

// Refresh implements ports.ChatGPTAuth.
func (a *Auth) Refresh(ctx context.Context, refreshToken string) (domain.ChatGPTToken, error) {
	t, err := a.cfg.TokenSource(a.ctx(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		if revoked(err) {
			return domain.ChatGPTToken{}, fmt.Errorf("%w: %s", ports.ErrChatGPTRevoked, describe(err))
		}
		return domain.ChatGPTToken{}, errs.Wrap(errs.Upstream, err, "the ChatGPT sign-in could not be refreshed: %s", describe(err))
	}
	return token(t)
}

// Revoke implements ports.ChatGPTAuth: the refresh token posted to the
// issuer's revocation endpoint as the Codex CLI posts it (form-encoded,
// with the hint and the public client's id). The auth server answers 200
// for any token, so only a failure to reach it, or a refusal of the
// request itself, is an error.
func (a *Auth) Revoke(ctx context.Context, refreshToken string) error {
	if refreshToken == "" {
		return nil
	}
	form := url.Values{"token": {refreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {a.cfg.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.revokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return errs.Wrap(errs.Upstream, err, "the ChatGPT sign-in could not be revoked")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := a.http.Do(req)
	if err != nil {
		// The error names the URL and the cause, never the form.
		return errs.Wrap(errs.Upstream, err, "the ChatGPT sign-in could not be revoked: the auth server did not answer")
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		reason := "no reason given"
		if json.Unmarshal(body, &oe) == nil && oe.Error != "" {
			reason = strings.TrimSuffix(oe.Error+": "+oe.Description, ": ")
		}
		return errs.E(errs.Upstream, "the ChatGPT sign-in could not be revoked: HTTP %d, %s", res.StatusCode, errs.Short(reason))
	}
	return nil
}

func (a *Auth) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, a.http)
}

// revoked reports a refusal no retry fixes: a 401, or an invalid_grant
// (OpenAI names the cause: refresh_token_expired, _reused, _invalidated).
func revoked(err error) bool {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	body := string(re.Body)
	return re.Response.StatusCode == http.StatusUnauthorized || re.ErrorCode == "invalid_grant" ||
		strings.Contains(body, "refresh_token_expired") || strings.Contains(body, "refresh_token_reused") ||
		strings.Contains(body, "refresh_token_invalidated") || strings.Contains(body, "invalid_grant")
}

// describe is the auth server's words for a failure, never a token.
func describe(err error) string {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err.Error()
	}
	status := 0
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	msg := re.ErrorCode
	if re.ErrorDescription != "" {
		msg += ": " + re.ErrorDescription
	}
	if msg == "" {
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(re.Body, &body) == nil && body.Error.Message != "" {
			msg = strings.TrimPrefix(body.Error.Code+": "+body.Error.Message, ": ")
		}
	}
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Sprintf("HTTP %d, %s", status, msg)
}

// token reads what the auth server issued: the account, its email and plan
// come from the ID token's claims (it arrived straight from the token
// endpoint over TLS, so it is read, not verified).
func token(t *oauth2.Token) (domain.ChatGPTToken, error) {
	out := domain.ChatGPTToken{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, ExpiresAt: t.Expiry}
	if id, ok := t.Extra("id_token").(string); ok && id != "" {
		out.IDToken = id
		var c idClaims
		if err := claims(id, &c); err != nil {
			return out, errs.Wrap(errs.Upstream, err, "the auth server's ID token is unreadable")
		}
		out.Email, out.AccountID, out.Plan = c.Email, c.Auth.AccountID, c.Auth.Plan
	}
	// The access token's own exp is the issuer's clock; expires_in is
	// only counted from when the answer arrived here.
	var c struct {
		Exp int64 `json:"exp"`
	}
	if claims(t.AccessToken, &c) == nil && c.Exp > 0 {
		out.ExpiresAt = time.Unix(c.Exp, 0).UTC()
	}
	if out.AccessToken == "" {
		return out, errs.E(errs.Upstream, "the auth server issued no access token")
	}
	return out, nil
}

type idClaims struct {
	Email string `json:"email"`
	Auth  struct {
		AccountID string `json:"chatgpt_account_id"`
		Plan      string `json:"chatgpt_plan_type"`
	} `json:"https://api.openai.com/auth"`
}

// claims decodes a JWT's payload into v.
func claims(jwt string, v any) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

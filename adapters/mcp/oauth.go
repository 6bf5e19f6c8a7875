package mcp

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// sdkWireError is a JSON-RPC error as the SDK reports it.
type sdkWireError = jsonrpc.Error

// oauthHandler builds the SDK's authorization-code handler for a target:
// the configured client (or, without one, the client a previous dynamic
// registration left in the grant, else a new registration), the stored
// grant as the first token source, every new or refreshed token written
// back through SaveGrant, and core's Authorize as the code fetcher.
func oauthHandler(target ports.MCPTarget, base *http.Client) (auth.OAuthHandler, error) {
	o := target.OAuth
	if o.Grant == nil && o.Authorize == nil {
		// Nobody could finish a sign-in: say so before registering a client
		// or discovering anything.
		return nil, &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the server needs an OAuth sign-in: connect it to sign in"}
	}
	redirect := o.RedirectURL
	if redirect == "" {
		// A dial that cannot sign in (Authorize is nil) never sends anyone
		// to a redirect, but the SDK wants one configured.
		redirect = "http://localhost/no-interactive-sign-in"
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		Client:              base,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if o.Authorize == nil {
				// A live connection lost its grant (its refresh token was
				// rejected): fail the request now; a person connects again.
				return nil, &ports.MCPError{Kind: ports.MCPNeedsAuth,
					Message: "the OAuth sign-in is no longer accepted (the refresh token was rejected): connect the server again to re-authorize"}
			}
			r, err := o.Authorize(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State, Iss: r.Iss}, nil
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			ts := &savingSource{base: c.TokenSource(ctx, t), grant: grantOf(c, t), save: o.SaveGrant}
			if err := ts.saveLocked(t); err != nil {
				return nil, err
			}
			return ts, nil
		},
	}
	if len(o.Scopes) > 0 {
		scopes := append([]string{}, o.Scopes...)
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	switch {
	case o.ClientID != "":
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	case o.Grant != nil && o.Grant.ClientID != "":
		// Reuse the dynamically registered client rather than registering
		// anew on every sign-in.
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.Grant.ClientID}
		if o.Grant.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.Grant.ClientSecret}
		}
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "agents-server", RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none",
		}}
	}
	if g := o.Grant; g != nil {
		c := &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: oauth2.AuthStyle(g.AuthStyle)}}
		t := &oauth2.Token{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, TokenType: g.TokenType, Expiry: g.Expiry}
		// Refreshes outlive the dial: a background context carrying the client.
		rctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
		cfg.InitialTokenSource = &savingSource{base: c.TokenSource(rctx, t), grant: *g, save: o.SaveGrant}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the OAuth configuration is unusable: " + errs.Short(err.Error()), Err: err}
	}
	return h, nil
}

// grantOf is what a fresh token and its client make as a stored grant.
func grantOf(c *oauth2.Config, t *oauth2.Token) domain.MCPGrant {
	return domain.MCPGrant{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry,
		TokenURL: c.Endpoint.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: int(c.Endpoint.AuthStyle)}
}

// savingSource is a token source that writes every new token back — the
// refreshed access token and a rotated refresh token — so a restart
// reconnects without a sign-in.
type savingSource struct {
	mu    sync.Mutex
	base  oauth2.TokenSource
	grant domain.MCPGrant
	save  func(domain.MCPGrant) error
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.base.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			// Kept as the SDK expects it: the request goes out unsigned,
			// draws a 401 and so the (failing-fast) authorization.
			return nil, err
		}
		return nil, &ports.MCPError{Kind: ports.MCPUnreachable, Message: "refreshing the OAuth token failed: " + errs.Short(err.Error()), Err: err}
	}
	// A refresh may hand back an identical access token (a JWT minted in
	// the same second) with a rotated refresh token: any change is saved.
	if t.AccessToken != s.grant.AccessToken || (t.RefreshToken != "" && t.RefreshToken != s.grant.RefreshToken) || !t.Expiry.Equal(s.grant.Expiry) {
		if err := s.saveLocked(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// saveLocked writes t as the grant. s.mu is held (or s is not shared yet).
func (s *savingSource) saveLocked(t *oauth2.Token) error {
	g := s.grant
	g.AccessToken, g.TokenType, g.Expiry = t.AccessToken, t.TokenType, t.Expiry
	if t.RefreshToken != "" {
		g.RefreshToken = t.RefreshToken
	}
	if s.save != nil {
		if err := s.save(g); err != nil {
			return err
		}
	}
	s.grant = g
	return nil
}

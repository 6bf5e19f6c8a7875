// Package oidc signs people in with an OpenID Provider: discovery, the
// authorization code flow with PKCE, and ID token verification against the
// provider's published keys. It wraps github.com/coreos/go-oidc and
// golang.org/x/oauth2 behind ports.OIDCProvider.
package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Options configure the client of one provider.
type Options struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// GroupsClaim names the ID token claim holding the person's groups (or
	// roles): a list of strings or one string ("": "groups").
	GroupsClaim string
	// Scopes beyond openid (nil: profile and email).
	Scopes []string
	// HTTP makes the calls to the provider (nil: the default client).
	HTTP *http.Client
}

// Provider is a ports.OIDCProvider. Discovery happens on first use, not
// at construction, so a provider that is down when the server starts only
// fails the sign-ins made while it is; a failed discovery is tried again
// on the next one.
type Provider struct {
	opts Options

	mu       sync.Mutex
	provider *gooidc.Provider
}

var _ ports.OIDCProvider = (*Provider)(nil)

// New returns the client of the provider opts names.
func New(opts Options) *Provider {
	if opts.GroupsClaim == "" {
		opts.GroupsClaim = "groups"
	}
	if opts.Scopes == nil {
		opts.Scopes = []string{"profile", "email"}
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	return &Provider{opts: opts}
}

// Issuer implements ports.OIDCProvider.
func (p *Provider) Issuer() string { return p.opts.Issuer }

// discover reads the provider's metadata once. Returns upstream.
func (p *Provider) discover(ctx context.Context) (*gooidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.provider != nil {
		return p.provider, nil
	}
	prov, err := gooidc.NewProvider(gooidc.ClientContext(ctx, p.opts.HTTP), p.opts.Issuer)
	if err != nil {
		return nil, errs.Wrap(errs.Upstream, err, "the identity provider's configuration could not be read")
	}
	p.provider = prov
	return prov, nil
}

func (p *Provider) config(prov *gooidc.Provider, redirectURL string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.opts.ClientID, ClientSecret: p.opts.ClientSecret, Endpoint: prov.Endpoint(),
		RedirectURL: redirectURL, Scopes: append([]string{gooidc.ScopeOpenID}, p.opts.Scopes...)}
}

// AuthorizeURL implements ports.OIDCProvider.
func (p *Provider) AuthorizeURL(ctx context.Context, a ports.OIDCAuthorize) (string, error) {
	prov, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return p.config(prov, a.RedirectURL).AuthCodeURL(a.State, gooidc.Nonce(a.Nonce), oauth2.S256ChallengeOption(a.Verifier)), nil
}

// Redeem implements ports.OIDCProvider.
func (p *Provider) Redeem(ctx context.Context, r ports.OIDCRedeem) (domain.OIDCClaims, error) {
	prov, err := p.discover(ctx)
	if err != nil {
		return domain.OIDCClaims{}, err
	}
	if r.Code == "" {
		return domain.OIDCClaims{}, errs.E(errs.Upstream, "the provider sent no authorization code")
	}
	tok, err := p.config(prov, r.RedirectURL).Exchange(gooidc.ClientContext(ctx, p.opts.HTTP), r.Code, oauth2.VerifierOption(r.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return domain.OIDCClaims{}, errs.Wrap(errs.Upstream, err, "the provider refused the code (%s)", re.ErrorCode)
		}
		return domain.OIDCClaims{}, errs.Wrap(errs.Upstream, err, "the provider could not be reached")
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return domain.OIDCClaims{}, errs.E(errs.Unauthorized, "the provider sent no ID token")
	}
	idt, err := prov.Verifier(&gooidc.Config{ClientID: p.opts.ClientID}).Verify(gooidc.ClientContext(ctx, p.opts.HTTP), raw)
	if err != nil {
		return domain.OIDCClaims{}, errs.Wrap(errs.Unauthorized, err, "its ID token failed verification")
	}
	if idt.Nonce != r.Nonce {
		return domain.OIDCClaims{}, errs.E(errs.Unauthorized, "its ID token belongs to another sign-in (nonce)")
	}
	return p.claims(idt)
}

// claims reads what the verified token says about the person.
func (p *Provider) claims(idt *gooidc.IDToken) (domain.OIDCClaims, error) {
	var std struct {
		Email             string          `json:"email"`
		EmailVerified     json.RawMessage `json:"email_verified"`
		PreferredUsername string          `json:"preferred_username"`
		Name              string          `json:"name"`
	}
	var all map[string]json.RawMessage
	if err := idt.Claims(&std); err != nil {
		return domain.OIDCClaims{}, errs.Wrap(errs.Unauthorized, err, "its ID token's claims could not be read")
	}
	if err := idt.Claims(&all); err != nil {
		return domain.OIDCClaims{}, errs.Wrap(errs.Unauthorized, err, "its ID token's claims could not be read")
	}
	c := domain.OIDCClaims{Issuer: idt.Issuer, Subject: idt.Subject, Email: std.Email, PreferredUsername: std.PreferredUsername,
		Name: std.Name, EmailVerified: isTrue(std.EmailVerified)}
	if g, ok := all[p.opts.GroupsClaim]; ok {
		c.Groups, c.HasGroups = stringList(g), true
	}
	return c, nil
}

// isTrue reads email_verified, which some providers send as "true".
func isTrue(raw json.RawMessage) bool {
	s := strings.Trim(string(raw), `"`)
	return strings.EqualFold(s, "true")
}

// stringList reads a claim that is a list of strings or one string.
func stringList(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

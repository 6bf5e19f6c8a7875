package workbench

import (
	"net/http"
	"strings"

	oidcadapter "github.com/agents-server/agents-server/adapters/oidc"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
)

// OIDCOptions turn on single sign-on with an OpenID Provider.
type OIDCOptions struct {
	// Issuer is the provider's issuer URL (its discovery document lives
	// under it, at /.well-known/openid-configuration).
	Issuer string
	// ClientID and ClientSecret are the workbench's registration at the
	// provider; its redirect URI is BaseURL (with any mount prefix) +
	// /api/v1/auth/oidc/callback.
	ClientID     string
	ClientSecret string
	// Name is the provider's name on the sign-in button ("": "single
	// sign-on").
	Name string
	// AllowedDomains, when set, are the only email domains that may sign
	// in (the provider must have verified the email).
	AllowedDomains []string
	// GroupsClaim names the ID token claim of the person's groups (or
	// roles) ("": groups).
	GroupsClaim string
	// AdminGroups make an admin, MemberGroups a member, on every sign-in;
	// when MemberGroups is set, being in one of either is required.
	AdminGroups, MemberGroups []string
	// HTTP makes the calls to the provider (nil: the default client).
	HTTP *http.Client
}

// buildOIDC is single sign-on's part of the auth service (nil when off).
// Returns validation for an incomplete configuration.
func buildOIDC(o Options, db *sqlstore.DB, set *settings.Service) (*auth.OIDCDeps, error) {
	c := o.OIDC
	if c == nil {
		return nil, nil
	}
	switch {
	case c.Issuer == "" || c.ClientID == "":
		return nil, errs.E(errs.Validation, "single sign-on needs the provider's issuer URL and the client id")
	case !strings.HasPrefix(c.Issuer, "https://") && !strings.HasPrefix(c.Issuer, "http://"):
		return nil, errs.E(errs.Validation, "the single sign-on issuer must be an http(s) URL")
	case o.BaseURL == "":
		return nil, errs.E(errs.Validation, "single sign-on needs the base URL people reach the server at (--base-url): "+
			"the provider sends them back to it")
	}
	name := c.Name
	if name == "" {
		name = "single sign-on"
	}
	domains := make([]string, 0, len(c.AllowedDomains))
	for _, d := range c.AllowedDomains {
		if d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@")); d != "" {
			domains = append(domains, d)
		}
	}
	prov := oidcadapter.New(oidcadapter.Options{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		GroupsClaim: c.GroupsClaim, HTTP: c.HTTP})
	return &auth.OIDCDeps{Provider: prov, Store: db, Settings: set, Config: auth.OIDCConfig{Name: name, AllowedDomains: domains,
		AdminGroups: c.AdminGroups, MemberGroups: c.MemberGroups}}, nil
}

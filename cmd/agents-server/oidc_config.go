package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/agents-server/agents-server/workbench"
)

// ssoConfig is single sign-on's part of the config; flags override env.
type ssoConfig struct {
	Issuer     string
	ClientID   string
	Secret     string // AGENTS_OIDC_CLIENT_SECRET (env only: a flag would show in ps)
	SecretFile string
	Name       string
	Domains    string
	Groups     string // the groups claim
	Admins     string
	Members    string
	// PasswordLoginOff refuses password sign-ins (tokens still work):
	// --password-login=false. The zero config signs in with passwords.
	PasswordLoginOff bool
	// HTTP makes the calls to the provider (nil: the default; tests).
	HTTP *http.Client
}

// ssoFlags registers the single sign-on flags on fs.
func ssoFlags(fs *flag.FlagSet, c *ssoConfig) error {
	c.Secret = os.Getenv("AGENTS_OIDC_CLIENT_SECRET")
	fs.StringVar(&c.Issuer, "oidc-issuer", envOr("AGENTS_OIDC_ISSUER", ""),
		"turn on single sign-on with this OpenID Provider's issuer URL, e.g. https://accounts.google.com; needs --base-url (env AGENTS_OIDC_ISSUER)")
	fs.StringVar(&c.ClientID, "oidc-client-id", envOr("AGENTS_OIDC_CLIENT_ID", ""),
		"the client id registered at the provider, with redirect URI <base-url>/api/v1/auth/oidc/callback (env AGENTS_OIDC_CLIENT_ID)")
	fs.StringVar(&c.SecretFile, "oidc-client-secret-file", envOr("AGENTS_OIDC_CLIENT_SECRET_FILE", ""),
		"file holding the client secret; or set AGENTS_OIDC_CLIENT_SECRET (never a flag: flags show in ps)")
	fs.StringVar(&c.Name, "oidc-name", envOr("AGENTS_OIDC_NAME", "single sign-on"),
		"the provider's name on the sign-in button: Sign in with <name> (env AGENTS_OIDC_NAME)")
	fs.StringVar(&c.Domains, "oidc-allowed-domains", envOr("AGENTS_OIDC_ALLOWED_DOMAINS", ""),
		"comma list of email domains that may sign in, e.g. example.com (the provider must verify the email); empty: any (env AGENTS_OIDC_ALLOWED_DOMAINS)")
	fs.StringVar(&c.Groups, "oidc-groups-claim", envOr("AGENTS_OIDC_GROUPS_CLAIM", "groups"),
		"the ID token claim listing the person's groups or roles (env AGENTS_OIDC_GROUPS_CLAIM)")
	fs.StringVar(&c.Admins, "oidc-admin-groups", envOr("AGENTS_OIDC_ADMIN_GROUPS", ""),
		"comma list of groups whose members are admins, set on every sign-in (env AGENTS_OIDC_ADMIN_GROUPS)")
	fs.StringVar(&c.Members, "oidc-member-groups", envOr("AGENTS_OIDC_MEMBER_GROUPS", ""),
		"comma list of groups whose members are members; when set, only these and the admin groups may sign in (env AGENTS_OIDC_MEMBER_GROUPS)")
	pw, err := strconv.ParseBool(envOr("AGENTS_PASSWORD_LOGIN", "true"))
	if err != nil {
		return fmt.Errorf("AGENTS_PASSWORD_LOGIN: %v", err)
	}
	c.PasswordLoginOff = !pw
	fs.BoolFunc("password-login",
		"allow signing in with a username and password (default true); false leaves single sign-on and API tokens, the bootstrap admin's included for recovery (env AGENTS_PASSWORD_LOGIN)",
		func(v string) error {
			on, err := strconv.ParseBool(v)
			c.PasswordLoginOff = !on
			return err
		})
	return nil
}

// check refuses an incomplete single sign-on configuration, and reads the
// secret's file.
func (c *ssoConfig) check(baseURL string) error {
	if c.Issuer == "" {
		if c.ClientID != "" || c.SecretFile != "" {
			return errors.New("--oidc-client-id and --oidc-client-secret-file need --oidc-issuer")
		}
		return nil
	}
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("--oidc-issuer must be an absolute http(s) URL")
	}
	if c.ClientID == "" {
		return errors.New("--oidc-issuer needs --oidc-client-id (env AGENTS_OIDC_CLIENT_ID)")
	}
	if baseURL == "" {
		return errors.New("--oidc-issuer needs --base-url: the provider sends people back to <base-url>/api/v1/auth/oidc/callback")
	}
	if c.SecretFile != "" {
		b, err := os.ReadFile(c.SecretFile)
		if err != nil {
			return fmt.Errorf("read --oidc-client-secret-file: %w", err)
		}
		c.Secret = strings.TrimSpace(string(b))
	}
	return nil
}

// options is the workbench's single sign-on (nil when off).
func (c ssoConfig) options() *workbench.OIDCOptions {
	if c.Issuer == "" {
		return nil
	}
	return &workbench.OIDCOptions{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.Secret, Name: c.Name,
		AllowedDomains: commaList(c.Domains), GroupsClaim: c.Groups, AdminGroups: commaList(c.Admins),
		MemberGroups: commaList(c.Members), HTTP: c.HTTP}
}

// commaList splits a comma list, dropping blanks.
func commaList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

package mcp

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
)

// Bounds of a server's configuration.
const (
	MaxName        = 40
	MaxEndpoint    = 2048
	MaxHeaders     = 32
	MaxHeaderValue = 8 << 10
	MaxClientID    = 256
	MaxScopes      = 32
	MaxScope       = 200
)

// namePattern keeps a server's name usable as a tool-name prefix: letters,
// digits, "-" and single "_" between them, never "__" (the separator).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(_[A-Za-z0-9-]+)*$`)

// reservedHeaders are set by the transport; a configured one would break
// the protocol or smuggle a second value.
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Accept", "Connection", "Transfer-Encoding",
	"Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Upgrade"}

// Input is what a client writes about a server. PUT is a full replace:
// omitted fields take their defaults, except the secret fields, where the
// mask keeps the stored value.
type Input struct {
	Name    string
	Enabled *bool // nil = true
	Config  domain.MCPConfig
}

// applyInput validates in and writes it into s; stored is the row as it
// was (zero for a create), whose sealed secrets the mask keeps. It reports
// whether the change invalidates the OAuth grant.
func (svc *Service) applyInput(s *domain.MCPServer, in Input, stored domain.MCPServer) (dropGrant bool, err error) {
	var f errs.FieldErrors
	switch {
	case in.Name == "":
		f.Add("name", "is required")
	case len(in.Name) > MaxName || !namePattern.MatchString(in.Name):
		f.Add("name", "must be 1-%d letters, digits, '-' or single '_' between them (it prefixes the server's tool names)", MaxName)
	}
	c := in.Config
	switch c.Transport {
	case domain.MCPStdio:
		return svc.applyStdio(s, in, stored, &f)
	case "", domain.MCPHTTP:
	default:
		f.Add("config.transport", "must be %s", domain.OrList(c.Transport.Values()))
	}
	if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 || c.ProjectID != "" {
		f.Add("config.transport", "command, args, env and project_id apply to transport stdio")
	}
	endpoint, msg := checkEndpoint(c.Endpoint)
	if msg != "" {
		f.Add("config.endpoint", "%s", msg)
	}
	mode := c.AuthMode
	if mode == "" {
		mode = domain.MCPAuthHeader
	}
	if !domain.Known(mode) {
		f.Add("config.auth_mode", "must be %s", domain.OrList(mode.Values()))
	}
	moved := stored.ID != "" && endpoint != stored.Config.Endpoint
	headers := map[string]string{}
	if len(c.Headers) > MaxHeaders {
		f.Add("config.headers", "at most %d headers", MaxHeaders)
	}
	for raw, v := range c.Headers {
		field := "config.headers." + raw
		if !validHeaderName(raw) {
			f.Add(field, "is not a valid header name")
			continue
		}
		// Header names are case-insensitive: stored in canonical form.
		name := canonicalHeader(raw)
		if _, dup := headers[name]; dup {
			f.Add(field, "is given twice (header names are case-insensitive)")
			continue
		}
		switch {
		case slices.ContainsFunc(reservedHeaders, func(r string) bool { return strings.EqualFold(r, name) }):
			f.Add(field, "is set by the MCP transport and cannot be configured")
			continue
		case v == secrets.Mask:
			kept, ok := stored.Config.Headers[name]
			if !ok {
				f.Add(field, "has no stored value to keep: send the value")
				continue
			}
			if moved {
				f.Add(field, "the stored value belongs to the previous endpoint: send it again or clear it")
				continue
			}
			headers[name] = kept
			continue
		case v == "":
			headers[name] = "" // cleared: dropped below, after the duplicate check
			continue
		case len(v) > MaxHeaderValue || strings.ContainsAny(v, "\r\n\x00"):
			f.Add(field, "must be one line of at most %d bytes", MaxHeaderValue)
			continue
		}
		sealed, err := svc.box.Seal(headerPlace(s.ID, name), v)
		if err != nil {
			return false, err
		}
		headers[name] = sealed
	}
	maps.DeleteFunc(headers, func(_, v string) bool { return v == "" })
	oauth := mode == domain.MCPAuthOAuth
	if !oauth && (c.OAuthClientID != "" || c.OAuthClientSecret != "" || len(c.OAuthScopes) > 0) {
		f.Add("config.auth_mode", "oauth_client_id, oauth_client_secret and oauth_scopes apply to auth_mode oauth")
	}
	if len(c.OAuthClientID) > MaxClientID || strings.ContainsAny(c.OAuthClientID, "\r\n\x00") {
		f.Add("config.oauth_client_id", "must be one line of at most %d bytes", MaxClientID)
	}
	secret := c.OAuthClientSecret
	switch {
	case secret == secrets.Mask && stored.Config.OAuthClientSecret == "":
		f.Add("config.oauth_client_secret", "has no stored value to keep: send the value")
	case secret == secrets.Mask && (moved || c.OAuthClientID != stored.Config.OAuthClientID):
		f.Add("config.oauth_client_secret", "the stored secret belongs to the previous endpoint and client: send it again or clear it")
	case secret != "" && c.OAuthClientID == "":
		f.Add("config.oauth_client_secret", "needs an oauth_client_id (without one the client registers itself)")
	case len(secret) > MaxHeaderValue:
		f.Add("config.oauth_client_secret", "is too long")
	}
	if c.PerPersonAuth && !oauth {
		f.Add("config.per_person_auth", "applies to auth_mode oauth: each person signs in with their own account")
	} else if c.PerPersonAuth && s.Scope != domain.ScopeGlobal {
		f.Add("config.per_person_auth", "applies to shared (global) servers only: a private server has one person, its owner")
	}
	if len(c.OAuthScopes) > MaxScopes {
		f.Add("config.oauth_scopes", "at most %d scopes", MaxScopes)
	}
	for i, sc := range c.OAuthScopes {
		if sc == "" || len(sc) > MaxScope || strings.ContainsAny(sc, " \t\r\n\"\\") {
			f.Add(fmt.Sprintf("config.oauth_scopes[%d]", i), "must be one scope token of at most %d characters", MaxScope)
		}
	}
	if err := f.Err(); err != nil {
		return false, err
	}
	sealedSecret := stored.Config.OAuthClientSecret
	if secret != secrets.Mask {
		if sealedSecret, err = svc.box.Seal(secretPlace(s.ID), secret); err != nil {
			return false, err
		}
	}
	s.Name = in.Name
	s.Enabled = in.Enabled == nil || *in.Enabled
	s.Config = domain.MCPConfig{Transport: domain.MCPHTTP, Endpoint: endpoint, Headers: headers, AuthMode: mode, OAuthClientID: c.OAuthClientID,
		OAuthClientSecret: sealedSecret, OAuthScopes: append([]string{}, c.OAuthScopes...), PerPersonAuth: c.PerPersonAuth}
	dropGrant = stored.ID != "" && (moved || stored.Config.Stdio() || mode != stored.Config.AuthMode || c.OAuthClientID != stored.Config.OAuthClientID ||
		c.PerPersonAuth != stored.Config.PerPersonAuth)
	return dropGrant, nil
}

// checkEndpoint accepts an absolute http(s) URL with a host and no
// fragment or credentials.
func checkEndpoint(raw string) (string, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "is required"
	}
	if len(raw) > MaxEndpoint {
		return "", fmt.Sprintf("must be at most %d characters", MaxEndpoint)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", "must be an absolute http or https URL (the server's streamable HTTP endpoint)"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", "must not have a fragment"
	case u.User != nil:
		return "", "must not carry credentials: use a header"
	}
	return raw, ""
}

// canonicalHeader spells a header name as HTTP does (X-Api-Key): a
// capital after each '-' and at the start, lower case elsewhere.
func canonicalHeader(name string) string {
	b := []byte(strings.ToLower(name))
	upper := true
	for i, c := range b {
		if upper && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		upper = c == '-'
	}
	return string(b)
}

func validHeaderName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return true
}

func headerPlace(serverID, name string) string {
	return secrets.Place("mcp_servers", "config", "headers", name, serverID)
}

func secretPlace(serverID string) string {
	return secrets.Place("mcp_servers", "config", "oauth_client_secret", serverID)
}

func grantPlace(serverID string) string { return secrets.Place("mcp_servers", "oauth_grant", serverID) }

// codePlace is where a delivered authorization code is sealed, by the
// sign-in's state, while it waits in the store for its dial.
func codePlace(state string) string { return secrets.Place("mcp_signins", "code", state) }

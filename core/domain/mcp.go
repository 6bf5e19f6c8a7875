package domain

import (
	"strings"
	"time"
)

// MCPServer is a configured MCP server: a streamable HTTP endpoint, or a
// program the workbench starts and talks to over stdio, whose tools agents
// may select while it is connected. Scoped like agents.
type MCPServer struct {
	ID string
	Ownership
	// Name prefixes the server's tools (MCPToolName), so it is unique across
	// the whole server, not per owner: two servers of one name would give
	// an agent two tools of one name.
	Name    string
	Enabled bool
	Config  MCPConfig
	// SealedGrant is the OAuth grant as stored (sealed JSON of MCPGrant);
	// "" when there is none (always, when each person signs in:
	// MCPConfig.PerPersonAuth). Only the MCP service opens it.
	SealedGrant string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MCPConfig is how to reach and authenticate to an MCP server. Inside the
// server, header values, environment values and the client secret hold
// their stored (sealed) form.
type MCPConfig struct {
	// Transport is how the server is reached; "" reads as MCPHTTP (rows
	// written before stdio servers existed).
	Transport         MCPTransport      `json:"transport,omitempty"`
	Endpoint          string            `json:"endpoint"`
	Headers           map[string]string `json:"headers"`
	AuthMode          MCPAuthMode       `json:"auth_mode"`
	OAuthClientID     string            `json:"oauth_client_id"`
	OAuthClientSecret string            `json:"oauth_client_secret"`
	OAuthScopes       []string          `json:"oauth_scopes"`
	// PerPersonAuth marks a shared OAuth server each person signs in to
	// with their own account: a run uses the grant of the person it runs
	// for, and SealedGrant stays empty. false: one shared sign-in (a
	// service account) serves everyone.
	PerPersonAuth bool `json:"per_person_auth,omitempty"`
	// Command, Args and Env start a stdio server's program: argv as given
	// (no shell), Env added to a minimal environment (never the
	// workbench's own).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// ProjectID runs a stdio server's program inside that project's
	// sandbox, its stdio carried over the sandbox's exec stream; "" runs
	// it on the workbench's host.
	ProjectID string `json:"project_id,omitempty"`
}

// Stdio reports whether the server is a program spoken to over stdio.
func (c MCPConfig) Stdio() bool { return c.Transport == MCPStdio }

// MCPTransport is how an MCP server is reached.
type MCPTransport string

// The transports: a streamable HTTP endpoint, or a program's stdin and
// stdout.
const (
	MCPHTTP  MCPTransport = "http"
	MCPStdio MCPTransport = "stdio"
)

// Values lists the transports.
func (MCPTransport) Values() []string { return []string{"http", "stdio"} }

// MCPAuthMode is how requests to an MCP server are authorized.
type MCPAuthMode string

// The auth modes: the configured headers alone, or an OAuth grant (the
// headers are still sent).
const (
	MCPAuthHeader MCPAuthMode = "header"
	MCPAuthOAuth  MCPAuthMode = "oauth"
)

// Values lists the auth modes.
func (MCPAuthMode) Values() []string { return []string{"header", "oauth"} }

// MCPStatus is a server's one derived connection status.
type MCPStatus string

// The statuses, derived in one place (core/mcp) from the row and the live
// connection.
const (
	MCPDisabled     MCPStatus = "disabled"     // the row is switched off
	MCPConnecting   MCPStatus = "connecting"   // a handshake is in flight
	MCPAuthorizing  MCPStatus = "authorizing"  // an OAuth sign-in waits for the person
	MCPNeedsAuth    MCPStatus = "needs_auth"   // OAuth without a usable grant: connect returns an authorize URL
	MCPDisconnected MCPStatus = "disconnected" // enabled, no live connection
	MCPConnected    MCPStatus = "connected"
)

// Values lists the statuses.
func (MCPStatus) Values() []string {
	return []string{"disabled", "connecting", "authorizing", "needs_auth", "disconnected", "connected"}
}

// MCPGrant is what an OAuth sign-in leaves: the token, where to refresh it,
// and the client it was issued to (possibly registered dynamically).
type MCPGrant struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	TokenURL     string    `json:"token_url"`
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	// AuthStyle is how the client authenticates at the token endpoint
	// (golang.org/x/oauth2's AuthStyle numbers; 0 = detect).
	AuthStyle int `json:"auth_style,omitempty"`
}

// MCPToolSeparator joins a server's name and its tool's name.
const MCPToolSeparator = "__"

// MCPToolName is the name an agent selects and a model calls for a server's
// tool: the server's name, "__", the tool's own name.
func MCPToolName(server, tool string) string { return server + MCPToolSeparator + tool }

// SplitMCPToolName splits a name made by MCPToolName; ok is false for a
// name that is not an MCP tool's.
func SplitMCPToolName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, MCPToolSeparator)
	return server, tool, ok && server != "" && tool != ""
}

// MCPSignIn is an interactive OAuth sign-in waiting for its callback, kept
// in the store so the callback completes it on whichever replica the
// browser reaches. The replica whose dial began it keeps the PKCE verifier
// (the OAuth client holds it in memory) and exchanges the code; the
// callback only hands the code over, once.
type MCPSignIn struct {
	State    string // the OAuth state the authorize URL carries
	ServerID string
	UserID   string // who began it; a caller's callback must be theirs
	// BindingHash is the SHA-256 (hex) of the secret the asking browser
	// carries back in a cookie: stored hashed, so a leaked row completes
	// nothing.
	BindingHash string
	RedirectURL string // the callback URL the authorization server returns to
	ExpiresAt   time.Time
	// Redirect is what the callback delivered; nil while it waits.
	Redirect *MCPRedirect
}

// MCPRedirect is what the authorization server's redirect carried for a
// sign-in: a code (sealed like a credential) and its issuer, or the
// server's refusal.
type MCPRedirect struct {
	SealedCode string
	Iss        string
	Refusal    string // "error: description" when the sign-in was refused
}

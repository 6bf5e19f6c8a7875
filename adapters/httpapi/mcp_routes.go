package httpapi

import (
	"crypto/rand"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/ports"
)

// MCPConfigInput is how to reach an MCP server: a streamable HTTP
// endpoint, or a program started and spoken to over stdio.
type MCPConfigInput struct {
	Transport         string            `json:"transport,omitempty" enum:"mcp_transport" doc:"http (default): a streamable HTTP endpoint; stdio: a program the workbench starts and speaks to over its stdin and stdout (command, args, env, project_id)"`
	Endpoint          string            `json:"endpoint,omitempty" doc:"The server's streamable HTTP endpoint (http or https); required for transport http"`
	Headers           map[string]string `json:"headers,omitempty" doc:"Sent with every request. Write-only values: ******** keeps the stored value, empty drops the header"`
	AuthMode          string            `json:"auth_mode,omitempty" enum:"mcp_auth_mode" doc:"header (default): the headers alone; oauth: an OAuth sign-in (authorization code + PKCE), headers still sent"`
	OAuthClientID     string            `json:"oauth_client_id,omitempty" doc:"A pre-registered client; empty registers one dynamically"`
	OAuthClientSecret string            `json:"oauth_client_secret,omitempty" doc:"Write-only: ******** keeps the stored secret, empty clears it"`
	OAuthScopes       []string          `json:"oauth_scopes,omitempty" doc:"The scopes to request; empty asks for what the server advertises"`
	PerPersonAuth     bool              `json:"per_person_auth,omitempty" doc:"Each person signs in with their own account (global oauth servers only): a run uses the grant of the person it runs for (a task's, workflow step's or trigger's owner). false (default): one shared sign-in serves everyone, as for a service account. Changing it drops the grants that no longer apply"`
	Command           string            `json:"command,omitempty" doc:"stdio: the program to start (npx, uvx, node, an absolute path); run as is, no shell"`
	Args              []string          `json:"args,omitempty" doc:"stdio: the program's arguments, one per entry (no shell splitting)"`
	Env               map[string]string `json:"env,omitempty" doc:"stdio: variables added to the program's minimal environment (it never inherits the workbench's own). Write-only values: ******** keeps the stored value (only while command, args and project_id are unchanged), empty drops the variable"`
	ProjectID         string            `json:"project_id,omitempty" doc:"stdio: run the program inside this project's sandbox (one the caller manages), its stdio carried over the sandbox's exec stream; empty runs it on the workbench's host, which members may only when the setting mcp_stdio_members_on_host is on"`
}

// MCPServerInput is what a client writes about an MCP server (PUT replaces
// it whole).
type MCPServerInput struct {
	Name    string         `json:"name" required:"true" doc:"Prefixes the server's tool names (name__tool): letters, digits, '-' and single '_', unique across every owner"`
	Enabled *bool          `json:"enabled,omitempty" doc:"Default true; a disabled server is disconnected and cannot be connected"`
	Config  MCPConfigInput `json:"config" required:"true"`
}

func (in MCPServerInput) core() mcp.Input {
	c := in.Config
	return mcp.Input{Name: in.Name, Enabled: in.Enabled, Config: domain.MCPConfig{Transport: domain.MCPTransport(c.Transport),
		Endpoint: c.Endpoint, Headers: c.Headers, AuthMode: domain.MCPAuthMode(c.AuthMode), OAuthClientID: c.OAuthClientID,
		OAuthClientSecret: c.OAuthClientSecret, OAuthScopes: c.OAuthScopes, PerPersonAuth: c.PerPersonAuth,
		Command: c.Command, Args: c.Args, Env: c.Env, ProjectID: c.ProjectID}}
}

// CreateMCPServerRequest adds a server; scope global is admin-only.
type CreateMCPServerRequest struct {
	MCPServerInput
	Scope string `json:"scope,omitempty" enum:"scope" doc:"Default private"`
}

// MCPConfigView is a server's config as read: secrets only ever masked.
type MCPConfigView struct {
	Transport         string            `json:"transport" enum:"mcp_transport"`
	Endpoint          string            `json:"endpoint"`
	Headers           map[string]string `json:"headers" doc:"Header names, each value ******** (stored) or empty"`
	AuthMode          string            `json:"auth_mode" enum:"mcp_auth_mode"`
	OAuthClientID     string            `json:"oauth_client_id"`
	OAuthClientSecret string            `json:"oauth_client_secret" doc:"******** when a secret is stored, else empty"`
	OAuthScopes       []string          `json:"oauth_scopes"`
	PerPersonAuth     bool              `json:"per_person_auth" doc:"Each person signs in with their own account; status, last_error, has_oauth_token and tools are then the caller's own"`
	Command           string            `json:"command"`
	Args              []string          `json:"args"`
	Env               map[string]string `json:"env" doc:"Variable names, each value ******** (stored) or empty"`
	ProjectID         string            `json:"project_id" doc:"stdio: the project whose sandbox runs the program; empty: the workbench's host"`
}

// MCPToolView is one tool of a connected server.
type MCPToolView struct {
	Name        string               `json:"name" doc:"What an agent selects in its tools and the model calls: server__tool"`
	Tool        string               `json:"tool" doc:"The name the server knows the tool by"`
	Title       string               `json:"title"`
	Description string               `json:"description"`
	Annotations ports.MCPAnnotations `json:"annotations" doc:"The server's hints, shown but never trusted for approval or planning"`
}

// MCPServerView is an MCP server as read, with its live status.
type MCPServerView struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	Enabled       bool          `json:"enabled"`
	Config        MCPConfigView `json:"config"`
	Scope         string        `json:"scope" enum:"scope"`
	OwnerID       string        `json:"owner_id"`
	Status        string        `json:"status" enum:"mcp_status" doc:"Derived: disabled, connecting, authorizing, needs_auth, disconnected or connected. Writes reconnect in the background: poll until it settles. When each person signs in (config.per_person_auth), the caller's own: needs_auth until they sign in"`
	LastError     string        `json:"last_error" doc:"Why the last connection attempt failed or ended; empty when connected (the caller's own when each person signs in)"`
	HasOAuthToken bool          `json:"has_oauth_token" doc:"Whether an OAuth grant is stored: the shared one, or when each person signs in, the caller's own"`
	Tools         []MCPToolView `json:"tools" doc:"The live connection's tools; empty unless connected"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
}

func mcpServerView(s mcp.Server) MCPServerView {
	c := s.Config
	v := MCPServerView{ID: s.ID, Name: s.Name, Enabled: s.Enabled, Scope: string(s.Scope), OwnerID: s.OwnerID,
		Config: MCPConfigView{Transport: string(c.Transport), Endpoint: c.Endpoint, Headers: c.Headers, AuthMode: string(c.AuthMode),
			OAuthClientID: c.OAuthClientID, OAuthClientSecret: c.OAuthClientSecret, OAuthScopes: c.OAuthScopes, PerPersonAuth: c.PerPersonAuth,
			Command: c.Command, Args: c.Args, Env: c.Env, ProjectID: c.ProjectID},
		Status: string(s.Status), LastError: s.LastError, HasOAuthToken: s.HasOAuthToken, Tools: []MCPToolView{},
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	for _, t := range s.Tools {
		v.Tools = append(v.Tools, MCPToolView{Name: t.Name, Tool: t.Tool, Title: t.Title, Description: t.Description, Annotations: t.Annotations})
	}
	return v
}

// MCPConnectView is what connect reports.
type MCPConnectView struct {
	Status       string `json:"status" enum:"mcp_status"`
	AuthorizeURL string `json:"authorize_url,omitempty" doc:"For an OAuth server without a usable grant: open it (a popup) to sign in; the callback completes the connection"`
}

func (s *Server) mcpRoutes() []Route {
	p := APIPrefix + "/mcp-servers"
	return []Route{
		op(http.MethodGet, p, "listMCPServers", "mcp",
			"MCP servers the caller can see, with their live status", http.StatusOK, s.handleListMCPServers),
		op(http.MethodPost, p, "createMCPServer", "mcp",
			"Add an MCP server (private unless an admin asks for global); an enabled one connects in the background",
			http.StatusCreated, s.handleCreateMCPServer).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getMCPServer", "mcp", "One MCP server", http.StatusOK, s.handleGetMCPServer),
		op(http.MethodPut, p+"/:id", "updateMCPServer", "mcp",
			"Replace an MCP server and reconnect it in the background; a new endpoint, auth mode or client id drops the OAuth grant",
			http.StatusOK, s.handleUpdateMCPServer).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteMCPServer", "mcp",
			"Delete an MCP server no agent selects tools of", http.StatusNoContent, s.handleDeleteMCPServer).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/scope", "setMCPServerScope", "mcp",
			"Publish (admin) or unpublish (admin or author) an MCP server", http.StatusOK, s.handleMCPServerScope).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/connect", "connectMCPServer", "mcp",
			"Connect now; an OAuth server without a usable grant answers an authorize URL (again while authorizing: a fresh one). "+
				"On a server each person signs in to, anyone who sees it connects and signs in as themselves",
			http.StatusOK, s.handleConnectMCPServer).WithOptionalBody().
			WithRefusals(http.StatusForbidden, http.StatusConflict, http.StatusBadGateway),
		op(http.MethodDelete, p+"/:id/oauth-token", "clearMCPServerToken", "mcp",
			"Drop the stored OAuth grant (to sign in again, e.g. with another account); on a server each person signs in to, the caller's own",
			http.StatusOK, s.handleClearMCPToken).
			WithRefusals(http.StatusForbidden),
		op(http.MethodDelete, p+"/:id/my-sign-in", "signOutMCPServer", "mcp",
			"Sign the caller out of a server each person signs in to: their own grant is dropped, everyone else's stays",
			http.StatusOK, s.handleSignOutMCPServer).
			WithRefusals(http.StatusConflict),
		raw(http.MethodGet, p+"/oauth/callback", "mcpOAuthCallback", "mcp",
			"Where the authorization server sends the browser back: completes the sign-in, and the popup closes itself",
			"text/html", s.handleMCPCallback).PublicRoute().
			WithQuery(QueryParam{Name: "code", Type: "string", Description: "The authorization code"},
				QueryParam{Name: "state", Type: "string", Description: "The sign-in's state"},
				QueryParam{Name: "iss", Type: "string", Description: "The issuer (RFC 9207)"},
				QueryParam{Name: "error", Type: "string", Description: "The authorization server's refusal"},
				QueryParam{Name: "error_description", Type: "string", Description: "Its explanation"}).
			// A callback that cannot complete is the same page saying
			// why: no code (400), another browser or account (403), no
			// sign-in waiting (404), the authorization server's refusal
			// (502).
			WithAltStatuses(http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusBadGateway),
		op(http.MethodPost, p+"/oauth/complete", "completeMCPSignIn", "mcp",
			"Complete a sign-in begun outside a browser (a script's connect): hand in the callback address the browser landed on; "+
				"only the account that called connect may",
			http.StatusNoContent, s.handleCompleteMCPSignIn).
			WithRefusals(http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusBadGateway),
	}
}

// MCPCompleteRequest hands in a sign-in's callback address.
type MCPCompleteRequest struct {
	URL string `json:"url" doc:"The address the browser landed on after the sign-in (the callback, with its state and code)" maxLength:"8192"`
}

func (s *Server) handleCompleteMCPSignIn(c echo.Context, req *MCPCompleteRequest) (NoBody, error) {
	return NoBody{}, s.deps.MCP.Complete(caller(c), req.URL)
}

// signInCookie is the cookie that binds a server's interactive sign-in to
// the browser that asked for it: the callback completes only where it
// comes back with it.
const signInCookie = "agents_mcp_signin_"

// callbackPath is where the callback is served, as the browser sees it.
func (s *Server) callbackPath(c echo.Context) string {
	return MountOf(c.Request().Context()).Prefix + APIPrefix + "/mcp-servers/oauth/callback"
}

// bindSignIn hands the asking browser the sign-in's binding: HttpOnly, sent
// only to the callback (its path), only on same-site requests and
// top-level navigations (Lax: the authorization server's redirect back is
// one), and only over TLS when the callback is https.
func (s *Server) bindSignIn(c echo.Context, serverID, binding, callbackURL string) {
	c.SetCookie(&http.Cookie{Name: signInCookie + serverID, Value: binding, Path: s.callbackPath(c),
		MaxAge: int(mcp.AttemptTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: strings.HasPrefix(callbackURL, "https://")})
}

// signInBindings are the bindings the callback's browser carried, by
// server id.
func signInBindings(c echo.Context) map[string]string {
	out := map[string]string{}
	for _, ck := range c.Cookies() {
		if id, ok := strings.CutPrefix(ck.Name, signInCookie); ok {
			out[id] = ck.Value
		}
	}
	return out
}

func (s *Server) handleListMCPServers(c echo.Context, _ *NoBody) ([]MCPServerView, error) {
	list, err := s.deps.MCP.List(c.Request().Context(), caller(c))
	return mapAll(list, mcpServerView), err
}

func (s *Server) handleCreateMCPServer(c echo.Context, req *CreateMCPServerRequest) (MCPServerView, error) {
	v, err := s.deps.MCP.Create(c.Request().Context(), caller(c), domain.Scope(req.Scope), req.core())
	return mcpServerView(v), err
}

func (s *Server) handleGetMCPServer(c echo.Context, _ *NoBody) (MCPServerView, error) {
	v, err := s.deps.MCP.Get(c.Request().Context(), caller(c), c.Param("id"))
	return mcpServerView(v), err
}

func (s *Server) handleUpdateMCPServer(c echo.Context, req *MCPServerInput) (MCPServerView, error) {
	v, err := s.deps.MCP.Update(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return mcpServerView(v), err
}

func (s *Server) handleDeleteMCPServer(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.MCP.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleMCPServerScope(c echo.Context, req *ScopeRequest) (MCPServerView, error) {
	v, err := s.deps.MCP.SetScope(c.Request().Context(), caller(c), c.Param("id"), domain.Scope(req.Scope))
	return mcpServerView(v), err
}

func (s *Server) handleConnectMCPServer(c echo.Context, _ *NoBody) (MCPConnectView, error) {
	callbackURL := s.externalOrigin(c) + APIPrefix + "/mcp-servers/oauth/callback"
	r, err := s.deps.MCP.Connect(c.Request().Context(), caller(c), c.Param("id"), callbackURL)
	if err == nil && r.Binding != "" {
		s.bindSignIn(c, c.Param("id"), r.Binding, callbackURL)
	}
	return MCPConnectView{Status: string(r.Status), AuthorizeURL: r.AuthorizeURL}, err
}

func (s *Server) handleClearMCPToken(c echo.Context, _ *NoBody) (MCPServerView, error) {
	v, err := s.deps.MCP.ClearGrant(c.Request().Context(), caller(c), c.Param("id"))
	return mcpServerView(v), err
}

func (s *Server) handleSignOutMCPServer(c echo.Context, _ *NoBody) (MCPServerView, error) {
	v, err := s.deps.MCP.SignOut(c.Request().Context(), caller(c), c.Param("id"))
	return mcpServerView(v), err
}

// callbackPage tells the person how the sign-in went and closes the popup
// (telling its opener) when it succeeded.
var callbackPage = template.Must(template.New("cb").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>MCP sign-in</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3rem">
<h1>{{if .OK}}Signed in{{else}}Sign-in failed{{end}}</h1>
<p>{{.Message}}</p>
<script nonce="{{.Nonce}}">{{if .OK}}
try { if (window.opener) window.opener.postMessage({type: "mcp-oauth", ok: true}, location.origin) } catch (e) {}
setTimeout(function () { window.close() }, 300)
{{end}}</script>
</body></html>`))

func (s *Server) handleMCPCallback(c echo.Context) error {
	q := c.QueryParams()
	err := s.deps.MCP.Deliver(mcp.Callback{State: q.Get("state"), Code: q.Get("code"), Iss: q.Get("iss"),
		Error: q.Get("error"), Description: q.Get("error_description"), Bindings: signInBindings(c)})
	data := struct {
		OK             bool
		Message, Nonce string
	}{true, "The MCP server is connecting. This window closes by itself.", rand.Text()}
	status := http.StatusOK
	if err != nil {
		data.OK, data.Message, status = false, strings.TrimSuffix(errs.MessageOf(err), ".")+". You can close this window.", StatusOf(errs.CodeOf(err))
		if errs.Is(err, errs.Forbidden) {
			data.Message += " (A script that began the sign-in completes it by sending this page's address, as its own account, to POST " +
				APIPrefix + "/mcp-servers/oauth/complete.)"
		}
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// The page's one script (tell the opener, close the popup) runs by its
	// nonce; nothing else may load. The popup arrives from the
	// authorization server's origin: a same-origin opener policy here would
	// cut it from the tab that opened it.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-"+data.Nonce+"'")
	h.Set("Cross-Origin-Opener-Policy", "unsafe-none")
	c.Response().WriteHeader(status)
	return callbackPage.Execute(c.Response(), data)
}

// externalOrigin is where the browser reaches this server: --base-url when
// set, else the direct request's scheme and host, followed by the mount
// prefix a host program serves the workbench under. Forwarded and
// X-Forwarded-* headers are never consulted: a client could name any
// origin with them, and a redirect must not follow what a request claims.
func (s *Server) externalOrigin(c echo.Context) string {
	prefix := MountOf(c.Request().Context()).Prefix
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL + prefix
	}
	scheme := "http"
	if c.Request().TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host + prefix
}

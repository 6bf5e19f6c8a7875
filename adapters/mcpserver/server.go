// Package mcpserver serves the workbench itself over MCP (streamable HTTP,
// the official Go SDK's server) at /mcp: with the caller's bearer token and
// the same visibility rules as the API, each agent the caller can see is an
// ask_<agent> tool, beside list_sessions and read_session. So Claude
// Desktop, Cursor or another workbench can call these agents; approvals
// still gate in the workbench.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/ask"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
)

// Path is where the server is mounted.
const Path = "/mcp"

// Deps are the core services the MCP server calls.
type Deps struct {
	Auth     *auth.Service
	Agents   *agents.Service
	Sessions *sessions.Service
	// Ask asks an agent and waits for its answer.
	Ask      *ask.Service
	Settings *settings.Service
	// Budget is the API's per-address rate budgets, which /mcp spends as
	// REST and the WebSockets do; nil: none (an embedder's choice).
	Budget Budget
	// SessionIdle closes a session no request has reached for this long
	// (0: DefaultSessionIdle); a call in flight keeps it open.
	SessionIdle time.Duration
	Version     string
	Log         *slog.Logger
}

// DefaultSessionIdle is how long an MCP session may sit unused before it
// is closed: a client that comes back later starts a new one (the
// transport answers 404 for the old), and one that never comes back stops
// holding memory.
const DefaultSessionIdle = 10 * time.Minute

// principalKey carries the caller in the token info the SDK hands tools.
const principalKey = "principal"

// transcriptLimit bounds what read_session returns, in entries.
const transcriptLimit = 200

// New returns the /mcp handler: the address's request budget, then
// (refused 404 while the mcp_server_enabled setting is off) the bearer
// token — not even checked while the address's failed sign-in budget is
// spent — and a server per MCP session built for its caller, at most
// max_mcp_sessions_per_user of them, each closed after SessionIdle unused.
func New(d Deps) http.Handler {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.SessionIdle <= 0 {
		d.SessionIdle = DefaultSessionIdle
	}
	s := &server{d: d, open: &openSessions{byUser: map[string]int{}}, schemas: sdk.NewSchemaCache()}
	verify := func(ctx context.Context, token string, r *http.Request) (*sdkauth.TokenInfo, error) {
		p, err := d.Auth.Authenticate(ctx, token)
		if errs.Is(err, errs.Unauthorized) {
			if d.Budget != nil {
				d.Budget.SpendAuthFailure(r)
			}
			return nil, fmt.Errorf("%w: %s", sdkauth.ErrInvalidToken, errs.MessageOf(err))
		}
		if err != nil {
			// The store did not answer: no verdict on the token.
			return nil, errors.New(errs.MessageOf(err))
		}
		return &sdkauth.TokenInfo{UserID: p.User.ID, Extra: map[string]any{principalKey: p}}, nil
	}
	transport := sdk.NewStreamableHTTPHandler(s.serverFor, &sdk.StreamableHTTPOptions{SessionTimeout: d.SessionIdle})
	// Workbench tokens carry no expiry in-band: the auth service checks it.
	protected := sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		s.capSessions(transport))
	return s.admit(protected)
}

type server struct {
	d    Deps
	open *openSessions
	// schemas spares each session's server the reflection of the same
	// tool input types.
	schemas *sdk.SchemaCache
}

// caller is the principal the request's token named.
func caller(ti *sdkauth.TokenInfo) (domain.Principal, bool) {
	if ti == nil {
		return domain.Principal{}, false
	}
	p, ok := ti.Extra[principalKey].(domain.Principal)
	return p, ok
}

// build makes the MCP server of a new session: its tools are what the
// caller can see now (a client lists again on a new session).
func (s *server) build(r *http.Request) *sdk.Server {
	p, ok := caller(sdkauth.TokenInfoFromContext(r.Context()))
	if !ok {
		return nil
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "agents-server", Version: s.d.Version}, &sdk.ServerOptions{
		Instructions: "Ask this workbench's agents with the ask_<agent> tools; list_sessions and read_session show the conversations.",
		SchemaCache:  s.schemas,
	})
	list, err := s.d.Agents.List(r.Context(), p)
	if err != nil {
		s.d.Log.Warn("mcp server: listing agents failed", "user", p.User.Username, "err", err)
	}
	taken := map[string]bool{}
	for _, a := range list {
		name := askName(a.Name, taken)
		agentID, agentName := a.ID, a.Name
		desc := "Ask the agent " + a.Name + " and get its answer (a new conversation in the workbench; approvals are decided there)."
		if a.Description != "" {
			desc += " " + a.Description
		}
		sdk.AddTool(srv, &sdk.Tool{Name: name, Description: desc}, func(ctx context.Context, req *sdk.CallToolRequest, in askInput) (*sdk.CallToolResult, any, error) {
			return s.ask(ctx, req, agentID, agentName, in)
		})
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "list_sessions", Description: "The caller's conversations in the workbench, newest first.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, s.listSessions)
	sdk.AddTool(srv, &sdk.Tool{Name: "read_session", Description: "One conversation's messages (the active branch), oldest first.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, s.readSession)
	return srv
}

// askName is ask_<agent> made safe for tool names and unique.
func askName(agent string, taken map[string]bool) string {
	base := "ask_" + domain.SafeToolName(strings.ToLower(agent))
	if len(base) > 60 {
		base = base[:60]
	}
	name := base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	taken[name] = true
	return name
}

type askInput struct {
	Prompt string `json:"prompt" jsonschema:"what to ask the agent"`
}

func (s *server) ask(ctx context.Context, req *sdk.CallToolRequest, agentID, agentName string, in askInput) (*sdk.CallToolResult, any, error) {
	p, ok := caller(req.Extra.TokenInfo)
	if !ok {
		return nil, nil, errors.New("no caller")
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return errorResult("prompt is required"), nil, nil
	}
	if err := domain.CheckNoNUL("prompt", in.Prompt); err != nil {
		return errorResult(errs.MessageOf(err)), nil, nil
	}
	title := "MCP: " + in.Prompt
	if utf8.RuneCountInString(title) > 80 {
		title = string([]rune(title)[:79]) + "…"
	}
	a, err := s.d.Ask.Ask(ctx, p, agentID, strings.Join(strings.Fields(title), " "), in.Prompt)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult(fmt.Sprintf("stopped waiting; the run %s goes on in the workbench (session %s)", a.RunID, a.SessionID)), nil, nil
		}
		return errorResult(errs.MessageOf(err)), nil, nil
	}
	s.d.Log.Info("mcp server: asked an agent", "user", p.User.Username, "agent", agentName, "run_id", a.RunID, "status", a.Status)
	switch a.Status {
	case domain.RunCompleted:
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Output}}}, nil, nil
	case domain.RunError:
		return errorResult(fmt.Sprintf("the run failed (%s): %s", a.ErrorCode, a.ErrorMessage)), nil, nil
	}
	return errorResult("the run was " + string(a.Status)), nil, nil
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

type sessionLine struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
}

type sessionList struct {
	Sessions []sessionLine `json:"sessions"`
}

func (s *server) listSessions(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, sessionList, error) {
	p, ok := caller(req.Extra.TokenInfo)
	if !ok {
		return nil, sessionList{}, errors.New("no caller")
	}
	list, err := s.d.Sessions.List(ctx, p, false)
	if err != nil {
		return errorResult(errs.MessageOf(err)), sessionList{}, nil
	}
	out := sessionList{Sessions: []sessionLine{}}
	for _, x := range list {
		out.Sessions = append(out.Sessions, sessionLine{ID: x.ID, Name: x.Name, UpdatedAt: x.UpdatedAt})
	}
	return nil, out, nil
}

type readInput struct {
	SessionID string `json:"session_id" jsonschema:"the session's id (from list_sessions)"`
}

func (s *server) readSession(ctx context.Context, req *sdk.CallToolRequest, in readInput) (*sdk.CallToolResult, any, error) {
	p, ok := caller(req.Extra.TokenInfo)
	if !ok {
		return nil, nil, errors.New("no caller")
	}
	if err := domain.CheckNoNUL("session_id", in.SessionID); err != nil {
		return errorResult(errs.MessageOf(err)), nil, nil
	}
	lines, err := s.d.Sessions.Transcript(ctx, p, in.SessionID, transcriptLimit)
	if err != nil {
		return errorResult(errs.MessageOf(err)), nil, nil
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s: %s\n\n", l.Role, l.Text)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimSpace(b.String())}}}, nil, nil
}

package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// CallTimeout is the ceiling of one tool call.
const CallTimeout = 30 * time.Minute

// ProbeTimeout bounds the context report's question to a server.
const ProbeTimeout = 2 * time.Second

// maxToolName is the longest tool name the model APIs accept.
const maxToolName = 64

// Tool is one of a connected server's tools as agents see it.
type Tool struct {
	// Name is what an agent selects and the model calls: the server's
	// name, "__", the tool's name made safe for model APIs.
	Name string
	// Tool is the name the server knows it by.
	Tool        string
	Title       string
	Description string
	InputSchema json.RawMessage
	Annotations ports.MCPAnnotations
	ServerID    string
	Server      string
	// user is whose connection serves the tool on a server each person
	// signs in to ("" for the shared one).
	user string
}

// Spec is the tool as a model is offered it, with the server it comes from
// and the hints it gives (shown, never trusted).
func (t Tool) Spec() tools.Spec {
	hints := t.Annotations
	return tools.Spec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema, Origin: tools.OriginMCP,
		Server: t.Server, Hints: &hints}
}

// exposed names a server's tools for agents: model APIs take
// [A-Za-z0-9_-]{1,64}, so other characters become "_", and a name left
// too long keeps a hash of the whole.
func exposed(server string, tools []ports.MCPTool) []Tool {
	out := make([]Tool, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		name := domain.MCPToolName(server, domain.SafeToolName(t.Name))
		if len(name) > maxToolName || seen[name] {
			sum := sha256.Sum256([]byte(t.Name))
			tail := "_" + hex.EncodeToString(sum[:4])
			name = name[:min(len(name), maxToolName-len(tail))] + tail
		}
		seen[name] = true
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, Tool{Name: name, Tool: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema,
			Annotations: t.Annotations, Server: server})
	}
	return out
}

// reasonGone is why a connected server's selected tool is unavailable.
const reasonGone = "the server no longer offers these tools"

// Unavailable is a selected server that cannot serve a run, and why.
type Unavailable struct {
	Server string
	Tools  []string
	Reason string
}

// Resolve finds the live tools behind an agent's selected names (the MCP
// ones; others are skipped), as the agent's holder may use them, for the
// person user (whom the run is for: on a server each person signs in to,
// their own connection serves it). A server that is not connected — or
// not one the holder may use, or one the person has not signed in to — is
// reported unavailable with the names it would have served, never dropped
// in silence.
func (s *Service) Resolve(ctx context.Context, holder domain.Ownership, user string, names []string) ([]Tool, []Unavailable, error) {
	byServer := map[string][]string{}
	var order []string
	for _, n := range names {
		srv, _, ok := domain.SplitMCPToolName(n)
		if !ok {
			continue
		}
		if _, seen := byServer[srv]; !seen {
			order = append(order, srv)
		}
		byServer[srv] = append(byServer[srv], n)
	}
	if len(order) == 0 {
		return nil, nil, nil
	}
	rows, err := s.d.Store.ListMCPServers(ctx)
	if err != nil {
		return nil, nil, err
	}
	var tools []Tool
	var out []Unavailable
	for _, srv := range order {
		want := byServer[srv]
		row, ok := findByName(rows, srv)
		if !ok || !holder.MayReference(row.Ownership) {
			out = append(out, Unavailable{Server: srv, Tools: want, Reason: "no such MCP server"})
			continue
		}
		status, lastErr, live := s.live(ctx, row, user)
		if status != domain.MCPConnected {
			reason := "the server is " + strings.ReplaceAll(string(status), "_", " ")
			if lastErr != "" {
				reason += ": " + lastErr
			}
			if row.Config.PerPersonAuth && status == domain.MCPNeedsAuth {
				reason = "each person signs in to this server with their own account, and the person this run is for has not " +
					"(or their sign-in expired): its tools are unavailable until they sign in (Connect in the MCP servers panel)"
			}
			out = append(out, Unavailable{Server: row.Name, Tools: want, Reason: reason})
			continue
		}
		var missing []string
		for _, n := range want {
			t, ok := toolNamed(live, n)
			if !ok {
				missing = append(missing, n)
				continue
			}
			t.ServerID, t.user = row.ID, keyFor(row, user).user
			tools = append(tools, t)
		}
		if len(missing) > 0 {
			out = append(out, Unavailable{Server: row.Name, Tools: missing, Reason: reasonGone})
		}
	}
	return tools, out, nil
}

func findByName(rows []domain.MCPServer, name string) (domain.MCPServer, bool) {
	for _, r := range rows {
		if strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return domain.MCPServer{}, false
}

func toolNamed(tools []Tool, name string) (Tool, bool) {
	for _, t := range tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// CheckSelectable validates an agent's selected MCP tool name for an agent
// held as holder: the server must exist and be one the holder may use; a
// connected server must offer the tool. A disconnected server's names are
// accepted (its tools are checked when a run uses them). Returns
// validation.
func (s *Service) CheckSelectable(ctx context.Context, holder domain.Ownership, name string) error {
	srv, _, ok := domain.SplitMCPToolName(name)
	if !ok {
		return errs.E(errs.Validation, "%q is not a built-in tool or an MCP tool (server__tool)", name)
	}
	rows, err := s.d.Store.ListMCPServers(ctx)
	if err != nil {
		return err
	}
	row, found := findByName(rows, srv)
	if !found || !row.VisibleTo(domain.Principal{User: domain.User{ID: holder.OwnerID}}) {
		return errs.E(errs.Validation, "no MCP server is named %q", srv)
	}
	if !holder.MayReference(row.Ownership) {
		return errs.E(errs.Validation, "a global agent can use only global MCP servers")
	}
	if status, _, live := s.live(ctx, row, holder.OwnerID); status == domain.MCPConnected {
		if _, ok := toolNamed(live, name); !ok {
			return errs.E(errs.Validation, "the MCP server %s offers no tool %q", row.Name, name)
		}
	}
	return nil
}

// Call calls a live tool (found by Resolve) with the model's arguments. A
// tool's own failure (isError) is a result; an error means the call got no
// answer: the server is not connected, its sign-in is gone, or the
// connection broke — then the status shows it.
func (s *Service) Call(ctx context.Context, t Tool, args json.RawMessage) (ports.MCPResult, error) {
	k := key{t.ServerID, t.user}
	s.mu.Lock()
	c := s.conns[k]
	var session ports.MCPSession
	var gen uint64
	if c != nil && c.phase == connected {
		session, gen = c.session, c.gen
	}
	s.mu.Unlock()
	if session == nil {
		status, lastErr := s.statusOf(ctx, t.ServerID, t.user)
		msg := fmt.Sprintf("the MCP server %s is %s", t.Server, strings.ReplaceAll(string(status), "_", " "))
		if lastErr != "" {
			msg += ": " + lastErr
		}
		return ports.MCPResult{}, errs.E(errs.Upstream, "%s", msg)
	}
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	res, err := session.CallTool(cctx, t.Tool, args)
	if err == nil || ctx.Err() != nil {
		return res, err
	}
	var me *ports.MCPError
	if errors.As(err, &me) {
		switch me.Kind {
		case ports.MCPUnreachable:
			s.lost(k, gen, session, err.Error())
		case ports.MCPNeedsAuth:
			s.settle(k, gen, func(c *conn) { c.needsAuth = true })
			s.lost(k, gen, session, err.Error())
			return res, errs.Wrap(errs.Upstream, err, "the MCP server %s needs to be signed in again (Connect it in the MCP servers panel): %s", t.Server, err.Error())
		}
	}
	return res, errs.Wrap(errs.Upstream, err, "the MCP server %s: %s", t.Server, err.Error())
}

// statusOf reads a server's status by id, as user sees it.
func (s *Service) statusOf(ctx context.Context, id, user string) (domain.MCPStatus, string) {
	row, err := s.d.Store.FindMCPServer(ctx, id)
	if err != nil {
		return domain.MCPDisconnected, "the server was deleted"
	}
	st, lastErr, _ := s.live(ctx, row, user)
	return st, lastErr
}

// ToolChars sizes the definitions of the tools an agent selects, per
// server, as user would be offered them, for the context report: each
// connected server is asked within ProbeTimeout; one that cannot answer is
// reported unavailable (-1).
func (s *Service) ToolChars(ctx context.Context, holder domain.Ownership, user string, names []string) (map[string]int, error) {
	tools, unavailable, err := s.Resolve(ctx, holder, user, names)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, u := range unavailable {
		if u.Reason != reasonGone {
			out[u.Server] = -1 // the server itself cannot serve; a missing tool alone counts nothing
		} else if _, ok := out[u.Server]; !ok {
			out[u.Server] = 0
		}
	}
	asked := map[string]bool{}
	for _, t := range tools {
		if !asked[t.ServerID] {
			asked[t.ServerID] = true
			if !s.probe(ctx, key{t.ServerID, t.user}) {
				out[t.Server] = -1
				continue
			}
		}
		if out[t.Server] >= 0 {
			out[t.Server] += len(t.Name) + len(t.Description) + len(t.InputSchema)
		}
	}
	return out, nil
}

// probe asks a connection for its server's tools within ProbeTimeout.
func (s *Service) probe(ctx context.Context, k key) bool {
	s.mu.Lock()
	var session ports.MCPSession
	if c := s.conns[k]; c != nil && c.phase == connected {
		session = c.session
	}
	s.mu.Unlock()
	if session == nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	_, err := session.ListTools(pctx)
	return err == nil
}

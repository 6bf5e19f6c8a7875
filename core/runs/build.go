package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// equip gives a built agent its tools for rc's run (agents.Builder.Equip),
// tracing the MCP tools each offer brings and saying which servers the
// run goes without; a task run's instructions end with backgroundSuffix.
func (s *Service) equip(ctx context.Context, rc *runCtx, b *agents.Built) error {
	req := tools.Request{Run: rc.lr.run, Agent: b.Agent, Background: rc.background}
	if rc.ws != nil {
		req.Workspace = rc.ws
	}
	suffix := ""
	if rc.background {
		suffix = backgroundSuffix
	}
	return s.builder.Equip(ctx, b, req, suffix, func(o tools.Offer) { s.reportUnavailable(rc, o) })
}

// reportUnavailable traces the MCP tools an offer got, per server, and
// tells the person which selected servers the run goes without, and why.
func (s *Service) reportUnavailable(rc *runCtx, o tools.Offer) {
	byServer := map[string][]string{}
	for _, spec := range o.Specs {
		if spec.Server != "" {
			byServer[spec.Server] = append(byServer[spec.Server], spec.Name)
		}
	}
	for server, names := range byServer {
		slices.Sort(names)
		rc.tr.Span(domain.SpanMCPTools, server, rc.parentSpan()).Meta("server", server).Meta("tools", names).Zero(nil)
	}
	for _, u := range o.Unavailable {
		rc.tr.Span(domain.SpanMCPTools, u.Server, rc.parentSpan()).Meta("server", u.Server).Meta("tools", u.Tools).
			Zero(errors.New(u.Reason))
		s.diagnostic(rc, "mcp_unavailable", "upstream", fmt.Sprintf("The MCP server %s is unavailable: %s", u.Server, u.Reason),
			map[string]string{"server": u.Server, "tools": strings.Join(u.Tools, ", ")})
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// maxMCPOutput bounds what the model reads of one MCP result, as file
// reads are bounded; the head and the tail are kept.
const maxMCPOutput = 64 << 10

// maxKeptMedia bounds the images and audio one MCP result keeps for its
// card; past it a part keeps its type and size, not its data.
const maxKeptMedia = 2 << 20

// defaultKeptResult is what a result keeps when the setting cannot be read.
const defaultKeptResult = 1 << 20

// Toolset is the MCP tools an agent selects, as a run's toolset: the
// live tools behind its selected names, and calls of them.
func (s *Service) Toolset() tools.Toolset { return toolset{s} }

type toolset struct{ s *Service }

// Offer resolves the MCP tools the agent selects. A selected server that
// cannot serve the run is noted in the instructions, so the model knows
// what it lacks, and reported unavailable.
func (ts toolset) Offer(ctx context.Context, r tools.Request) (tools.Offer, error) {
	o := tools.Offer{Selected: true}
	var names []string
	for _, n := range r.Agent.Tools {
		if _, _, ok := domain.SplitMCPToolName(n); ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return o, nil
	}
	// The run is for its owner (a task's, a workflow step's or a
	// trigger's too): a server each person signs in to uses their grant.
	live, unavailable, err := ts.s.Resolve(ctx, r.Agent.Ownership, r.Run.OwnerID, names)
	if err != nil {
		return o, err
	}
	byName := make(map[string]Tool, len(live))
	for _, t := range live {
		byName[t.Name] = t
		o.Specs = append(o.Specs, t.Spec())
	}
	o.State = byName
	if len(unavailable) > 0 {
		var note strings.Builder
		note.WriteString("Note: some of your tools are unavailable in this run:")
		for _, u := range unavailable {
			fmt.Fprintf(&note, "\n- %s (%s): %s", u.Server, strings.Join(u.Tools, ", "), u.Reason)
			o.Unavailable = append(o.Unavailable, tools.Unavailable(u))
		}
		o.Instructions = note.String()
	}
	return o, nil
}

// Call answers a call of a live MCP tool. The model reads the text parts
// (or the structured content when there is no text) and a line per image,
// audio or resource; the card keeps every part, images included. A call
// that got no answer is an error result naming the server's state.
func (ts toolset) Call(ctx context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	t := rc.State.(map[string]Tool)[call.Name]
	display := &domain.Display{Kind: "mcp", Title: t.Server + " · " + t.Tool, Extra: map[string]string{"server": t.Server, "tool": t.Tool}}
	r := tools.Answer{Display: display}
	res, err := ts.s.Call(ctx, t, json.RawMessage(call.Arguments))
	if err != nil {
		r.IsError, display.IsError = true, true
		r.Output = "Error: " + errs.MessageOf(err)
		display.Summary = errs.MessageOf(err)
		return r
	}
	r.IsError, display.IsError = res.IsError, res.IsError
	r.Output = mcpOutput(res)
	budget := defaultKeptResult
	if ts.s.d.Settings != nil {
		if kb, err := ts.s.d.Settings.Int(ctx, settings.KeyMCPResultMaxKB); err == nil && kb > 0 {
			budget = kb << 10
		}
	}
	parts, budget := keptParts(res.Content, budget)
	if len(res.Structured) > 0 {
		if len(res.Structured) <= budget {
			display.Extra["structured"] = string(res.Structured)
		} else {
			parts = append(parts, notKept(fmt.Sprintf("structured content (%d bytes)", len(res.Structured))))
		}
	}
	if kept, err := json.Marshal(parts); err == nil {
		display.Extra["content"] = string(kept)
	}
	return r
}

// notKept is the part that says what of a result its card dropped.
func notKept(what string) ports.MCPContent {
	return ports.MCPContent{Type: "text", Text: fmt.Sprintf("[… %s not kept: the result is larger than the %s setting allows]",
		what, settings.KeyMCPResultMaxKB)}
}

// mcpOutput is what the model reads of a result.
func mcpOutput(res ports.MCPResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			hasText = true
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s: %s, %d bytes, shown to the person]", c.Type, c.MIMEType, len(c.Data)*3/4))
		case "resource", "resource_link":
			line := fmt.Sprintf("[%s: %s]", c.Type, c.URI)
			if c.Text != "" {
				line += "\n" + c.Text
			}
			parts = append(parts, line)
		default:
			parts = append(parts, c.Text)
		}
	}
	if !hasText && len(res.Structured) > 0 {
		parts = append(parts, string(res.Structured))
	}
	out := strings.Join(parts, "\n")
	if res.IsError && !strings.HasPrefix(out, "Error") {
		out = "Error: " + out
	}
	if len(out) > maxMCPOutput {
		half := maxMCPOutput / 2
		out = fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", out[:half], len(out)-2*half, out[len(out)-half:])
	}
	return out
}

// keptParts are the parts a card keeps, within budget bytes in all: text
// past maxMCPOutput is cut, media past maxKeptMedia lose their data (the
// card says how big they were), and the parts past the budget are dropped
// for one that says so. It returns what is left of the budget.
func keptParts(content []ports.MCPContent, budget int) ([]ports.MCPContent, int) {
	out := make([]ports.MCPContent, 0, len(content))
	media := maxKeptMedia
	for i, c := range content {
		if len(c.Text) > maxMCPOutput {
			c.Text = c.Text[:maxMCPOutput] + fmt.Sprintf("\n[… %d more bytes not kept …]", len(c.Text)-maxMCPOutput)
		}
		if c.Data != "" {
			if len(c.Data) > media || len(c.Data) > budget {
				c.Text = fmt.Sprintf("(%d bytes, too large to keep)", len(c.Data)*3/4)
				c.Data = ""
			} else {
				media -= len(c.Data)
			}
		}
		size := len(c.Text) + len(c.Data) + len(c.URI) + len(c.Name) + len(c.MIMEType)
		if size > budget {
			rest := 0
			for _, d := range content[i:] {
				rest += len(d.Text) + len(d.Data)
			}
			return append(out, notKept(fmt.Sprintf("%d more parts (%d bytes)", len(content)-i, rest))), 0
		}
		budget -= size
		out = append(out, c)
	}
	return out, budget
}

// Package tools describes the tool surface an agent is given: every tool's
// name, description and parameter schema, by origin. The run engine executes
// them; this package is what validation and the /agents/:id/tools report
// read, so the two cannot disagree.
package tools

import (
	"encoding/json"

	"github.com/agents-server/agents-server/ports"
)

// Origins say where a tool comes from, for the context report's buckets.
const (
	OriginBuiltin = "builtin"
	OriginHandoff = "handoff"
	OriginMCP     = "mcp"
	// OriginUnknown marks a call of a tool the run did not offer: the
	// model invented its name.
	OriginUnknown = "unknown"
)

// Spec is a tool as a model sees it.
type Spec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object
	Origin      string
	// Server and Hints describe an MCP tool: the server it comes from and
	// the hints it gives (shown, never trusted).
	Server string
	Hints  *ports.MCPAnnotations
	// ReadOnly says the tool only reads and thinks: a planning session may
	// still use it (every other tool is refused while planning).
	ReadOnly bool
	// AlwaysAsks says every call waits for a person's decision, whatever
	// the agent's approve_tools (see Asker).
	AlwaysAsks bool
	// Streams says the tool streams its output as it runs, as terminal
	// text (RunCall.Progress).
	Streams bool
}

// Selectable is the registry of built-in tools an agent opts into through
// its `tools` list. Tools that come with a context rather than a choice (a
// project's file and command tools, handoffs, MCP) are not listed here.
// It grows as the run engine gains tools; a name not here is refused.
var Selectable = []Spec{}

// Lookup returns the selectable tool of that name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Selectable {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// handoffParameters is the (empty) argument object of a transfer tool.
var handoffParameters = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// Handoff is the tool that hands the conversation to another agent.
func Handoff(toolName, targetName, description string) Spec {
	desc := "Hand the conversation to " + targetName + "."
	if description != "" {
		desc += " " + description
	}
	return Spec{Name: toolName, Description: desc, Parameters: handoffParameters, Origin: OriginHandoff}
}

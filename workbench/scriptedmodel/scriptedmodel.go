// Package scriptedmodel is the scripted model server: an OpenAI-compatible
// (Responses and Chat Completions) and Anthropic-compatible model API that
// answers from scripts — text, reasoning, tool calls, failures — streamed
// the way the vendors stream. It lets a person try the workbench without an
// API key (agents-server scripted-model) and lets a program that embeds the
// workbench test its agents and Go tools over real HTTP, through the
// official SDKs, with no model API at hand.
package scriptedmodel

import "github.com/agents-server/agents-server/adapters/llm/scripted"

// The server and its script vocabulary.
type (
	// Server serves the scripts; mount Handler on a listener and point a
	// provider's base URL at it (with /v1 for the OpenAI type).
	Server = scripted.Server
	// Options configures a Server (an API key to require).
	Options = scripted.Options
	// Script is what a model name answers: exchanges matched in order.
	Script = scripted.Script
	// Exchange is one scripted turn: when it applies, and its steps.
	Exchange = scripted.Exchange
	// Step is one response of an exchange: text, reasoning, tool calls or
	// a failure.
	Step = scripted.Step
	// ToolCall is a function call a step makes.
	ToolCall = scripted.ToolCall
	// Failure is an error a step answers with.
	Failure = scripted.Failure
	// Recorded is a request the server received.
	Recorded = scripted.Recorded
)

// New returns a server with no scripts: every model echoes.
func New(o Options) *Server { return scripted.New(o) }

// DefaultScripts are the scripts agents-server scripted-model serves.
func DefaultScripts() map[string]Script { return scripted.DefaultScripts() }

// LoadScripts reads scripts from a JSON file: {"<model>": {"exchanges": …}}.
func LoadScripts(path string) (map[string]Script, error) { return scripted.LoadScripts(path) }

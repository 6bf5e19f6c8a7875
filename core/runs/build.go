package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// defaultMaxTurns bounds a run whose agent sets no max_turns.
const defaultMaxTurns = 10

// builtAgent is an agent ready to run: its endpoint resolved, its
// instructions assembled, its tools, guardrails and output schema compiled.
type builtAgent struct {
	agent        domain.Agent
	endpoint     ports.ProviderEndpoint
	instructions string
	layers       map[string]int // instruction layer → characters, for the context profile
	specs        []tools.Spec   // the tool surface, by origin
	handoffs     map[string]domain.Agent
	handoffSpecs []tools.Spec // the transfer tools, in the agent's order
	checks       []*domain.GuardrailCheck
	schema       *agents.OutputSchema
	// owner is the toolset (its index in Deps.Toolsets) that offered each
	// tool, by name; states are what each toolset's offer kept.
	owner  map[string]int
	states []any
}

func (b *builtAgent) maxTurns() int {
	if b.agent.Behavior.MaxTurns > 0 {
		return b.agent.Behavior.MaxTurns
	}
	return defaultMaxTurns
}

// toolDefs is what the model is offered: every tool, except that planning
// hides handoffs (a plan is made before anyone else takes over) and only
// planning offers submit_plan.
func (b *builtAgent) toolDefs(planning bool) []ports.ToolDef {
	var out []ports.ToolDef
	for _, s := range b.specs {
		if (planning && s.Origin == tools.OriginHandoff) || (!planning && s.Origin == tools.OriginPlan) {
			continue
		}
		out = append(out, ports.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}

// configError is a run failure caused by configuration: the run ends with
// code config_error and a message naming what to fix.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configErr(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// endpoint resolves a provider to a call endpoint (models.Service.Endpoint):
// what configuration prevents ends the run as config_error.
func (s *Service) endpoint(ctx context.Context, providerID, agentName string) (ports.ProviderEndpoint, error) {
	ep, err := s.d.Models.Endpoint(ctx, providerID, agentName)
	var ce *models.ConfigError
	if errors.As(err, &ce) {
		return ep, &configError{msg: ce.Msg}
	}
	return ep, err
}

// build assembles an agent from its stored configuration: provider and key,
// the instruction layers, the tool surface, guardrails, output schema.
func (s *Service) build(ctx context.Context, agentID string) (*builtAgent, error) {
	a, err := s.d.Config.FindAgent(ctx, agentID)
	if errs.Is(err, errs.NotFound) {
		return nil, configErr("the agent %s no longer exists", agentID)
	}
	if err != nil {
		return nil, err
	}
	return s.buildFrom(ctx, a)
}

// buildFrom is build for an agent already read (the one Start checked).
func (s *Service) buildFrom(ctx context.Context, a domain.Agent) (*builtAgent, error) {
	ep, err := s.endpoint(ctx, a.ProviderID, a.Name)
	if err != nil {
		return nil, err
	}
	b := &builtAgent{agent: a, endpoint: ep}
	if b.instructions, b.layers, err = s.instructions(ctx, a); err != nil {
		return nil, err
	}
	if b.checks, err = s.d.Guardrails.Checks(ctx, a.Guardrails.Guardrails); errs.Is(err, errs.Validation) {
		return nil, configErr("%s", errs.MessageOf(err))
	} else if err != nil {
		return nil, err
	}
	if len(a.Guardrails.OutputSchema) > 0 {
		if b.schema, err = agents.CompileOutputSchema(a.Guardrails.OutputSchema); err != nil {
			return nil, configErr("agent %q has an unusable output_schema: %v", a.Name, err)
		}
	}
	if b.handoffSpecs, b.handoffs, err = agents.Handoffs(ctx, s.d.Config, a); err != nil {
		return nil, err
	}
	return b, nil
}

// instructions reads the global system prompt and the memories, and
// layers them with the agent's instructions (agents.Instructions).
func (s *Service) instructions(ctx context.Context, a domain.Agent) (string, map[string]int, error) {
	global, err := s.d.Settings.String(ctx, settings.KeySystemPrompt)
	if err != nil {
		return "", nil, err
	}
	mems, err := s.d.Config.ListMemories(ctx)
	if err != nil {
		return "", nil, err
	}
	text, layers := agents.Instructions(global, a, mems)
	return text, layers, nil
}

// profile is what the build put in front of the conversation, in
// characters: the context report's prompt section.
func (b *builtAgent) profile() json.RawMessage {
	byOrigin := map[string]int{}
	for _, s := range b.specs {
		byOrigin[s.Origin] += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	p, _ := json.Marshal(map[string]any{"layers": b.layers, "tools": byOrigin, "agent": b.agent.Name})
	return p
}

// equip gives an agent its tools: what each toolset offers it on this
// run — the tools it selected first, then its handoffs, then what the run
// brings (the task verbs, authoring, the project's sandbox, skills) — and
// each offer's instructions after its own, a task run's suffix between
// the two.
func (s *Service) equip(ctx context.Context, rc *runCtx, b *builtAgent) error {
	req := tools.Request{Run: rc.lr.run, Agent: b.agent, Background: rc.background}
	if rc.ws != nil {
		req.Workspace = rc.ws
	}
	offers := make([]tools.Offer, len(s.d.Toolsets))
	for i, ts := range s.d.Toolsets {
		o, err := ts.Offer(ctx, req)
		var bad *tools.ConfigError
		if errors.As(err, &bad) {
			return configErr("%s", bad.Msg)
		}
		if err != nil {
			return err
		}
		offers[i] = o
		s.reportUnavailable(rc, o)
	}
	b.owner, b.states = map[string]int{}, make([]any, len(offers))
	take := func(selected bool) {
		for i, o := range offers {
			if o.Selected != selected {
				continue
			}
			b.states[i] = o.State
			for _, spec := range o.Specs {
				b.specs = append(b.specs, spec)
				b.owner[spec.Name] = i
			}
			b.addInstructions(o.Instructions)
			if o.Layer != "" {
				b.layers[o.Layer] = len(o.Instructions)
			}
		}
	}
	take(true)
	b.specs = append(b.specs, b.handoffSpecs...)
	if rc.background {
		b.addInstructions(backgroundSuffix)
	}
	take(false)
	return nil
}

// addInstructions puts text after the agent's instructions (blank text:
// nothing).
func (b *builtAgent) addInstructions(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if b.instructions != "" {
		b.instructions += "\n\n"
	}
	b.instructions += text
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

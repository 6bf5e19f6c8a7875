package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// DefaultMaxTurns bounds a run whose agent sets no max_turns.
const DefaultMaxTurns = 10

// Built is an agent ready to run: its endpoint resolved, its instructions
// assembled, its tools, guardrails and output schema compiled.
type Built struct {
	Agent        domain.Agent
	Endpoint     ports.ProviderEndpoint
	Instructions string
	// Layers are the instruction layers' sizes in characters, by layer,
	// for the context profile.
	Layers map[string]int
	// Specs is the tool surface, by origin (Equip fills it).
	Specs []tools.Spec
	// Handoffs are the transfer tools' targets, by tool name;
	// HandoffSpecs the transfer tools, in the agent's order.
	Handoffs     map[string]domain.Agent
	HandoffSpecs []tools.Spec
	Checks       []*domain.GuardrailCheck
	Schema       *OutputSchema
	// Owner is the toolset (its index in the builder's toolsets) that
	// offered each tool, by name; States are what each toolset's offer
	// kept, for its calls.
	Owner  map[string]int
	States []any
}

// MaxTurns is how many turns the agent's runs may take.
func (b *Built) MaxTurns() int {
	if b.Agent.Behavior.MaxTurns > 0 {
		return b.Agent.Behavior.MaxTurns
	}
	return DefaultMaxTurns
}

// ToolDefs is what the model is offered: every tool, except that planning
// hides handoffs (a plan is made before anyone else takes over) and only
// planning offers submit_plan.
func (b *Built) ToolDefs(planning bool) []ports.ToolDef {
	var out []ports.ToolDef
	for _, s := range b.Specs {
		if (planning && s.Origin == tools.OriginHandoff) || (!planning && s.Origin == tools.OriginPlan) {
			continue
		}
		out = append(out, ports.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}

// Offered is the spec of the tool called name that the agent offers.
func (b *Built) Offered(name string) (tools.Spec, bool) {
	i := slices.IndexFunc(b.Specs, func(sp tools.Spec) bool { return sp.Name == name })
	if i < 0 {
		return tools.Spec{}, false
	}
	return b.Specs[i], true
}

// HandoffNames names the transfer tools.
func (b *Built) HandoffNames() []string {
	out := []string{}
	for name := range b.Handoffs {
		out = append(out, name)
	}
	return out
}

// Profile is what the build put in front of the conversation, in
// characters: the context report's prompt section.
func (b *Built) Profile() json.RawMessage {
	byOrigin := map[string]int{}
	for _, s := range b.Specs {
		byOrigin[s.Origin] += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	p, _ := json.Marshal(map[string]any{"layers": b.Layers, "tools": byOrigin, "agent": b.Agent.Name})
	return p
}

// addInstructions puts text after the agent's instructions (blank text:
// nothing).
func (b *Built) addInstructions(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if b.Instructions != "" {
		b.Instructions += "\n\n"
	}
	b.Instructions += text
}

// BuildDeps are what a Builder reads.
type BuildDeps struct {
	// Config reads the agent, its handoff targets and the memories.
	Config interface {
		Finder
		ListMemories(ctx context.Context) ([]domain.Memory, error)
	}
	// Endpoints resolves providers (core/models); a *domain.ConfigError
	// says what configuration prevents it.
	Endpoints interface {
		Endpoint(ctx context.Context, providerID, agentName string) (ports.ProviderEndpoint, error)
	}
	Settings *settings.Service
	// Guardrails compiles the guardrails an agent selects (validation for
	// an unknown or broken one).
	Guardrails interface {
		Checks(ctx context.Context, names []string) ([]*domain.GuardrailCheck, error)
	}
	// Toolsets are where tools come from, in the order they are offered.
	Toolsets []tools.Toolset
}

// Builder readies agents for runs. What configuration prevents is a
// *domain.ConfigError.
type Builder struct{ d BuildDeps }

// NewBuilder returns a Builder.
func NewBuilder(d BuildDeps) *Builder { return &Builder{d: d} }

// Build assembles an agent from its stored configuration: provider and
// key, the instruction layers, guardrails, output schema, handoffs. A
// model other than "" answers in place of the agent's own.
func (r *Builder) Build(ctx context.Context, agentID, model string) (*Built, error) {
	a, err := r.d.Config.FindAgent(ctx, agentID)
	if errs.Is(err, errs.NotFound) {
		return nil, domain.ConfigErr("the agent %s no longer exists", agentID)
	}
	if err != nil {
		return nil, err
	}
	a.Model = cmp.Or(model, a.Model)
	return r.BuildFrom(ctx, a)
}

// BuildFrom is Build for an agent already read.
func (r *Builder) BuildFrom(ctx context.Context, a domain.Agent) (*Built, error) {
	ep, err := r.d.Endpoints.Endpoint(ctx, a.ProviderID, a.Name)
	if err != nil {
		return nil, err
	}
	b := &Built{Agent: a, Endpoint: ep}
	global, err := r.d.Settings.String(ctx, settings.KeySystemPrompt)
	if err != nil {
		return nil, err
	}
	mems, err := r.d.Config.ListMemories(ctx)
	if err != nil {
		return nil, err
	}
	b.Instructions, b.Layers = Instructions(global, a, mems)
	if b.Checks, err = r.d.Guardrails.Checks(ctx, a.Guardrails.Guardrails); errs.Is(err, errs.Validation) {
		return nil, domain.ConfigErr("%s", errs.MessageOf(err))
	} else if err != nil {
		return nil, err
	}
	if len(a.Guardrails.OutputSchema) > 0 {
		if b.Schema, err = CompileOutputSchema(a.Guardrails.OutputSchema); err != nil {
			return nil, domain.ConfigErr("agent %q has an unusable output_schema: %v", a.Name, err)
		}
	}
	if b.HandoffSpecs, b.Handoffs, err = Handoffs(ctx, r.d.Config, a); err != nil {
		return nil, err
	}
	return b, nil
}

// Equip gives a built agent its tools: what each toolset offers it on
// req's run — the tools it selected first, then its handoffs, then what
// the run brings (the task verbs, authoring, the project's sandbox,
// skills) — and each offer's instructions after its own, between the two
// the suffix (a task run's). heard is told of each offer as it comes.
func (r *Builder) Equip(ctx context.Context, b *Built, req tools.Request, suffix string, heard func(tools.Offer)) error {
	offers := make([]tools.Offer, len(r.d.Toolsets))
	for i, ts := range r.d.Toolsets {
		o, err := ts.Offer(ctx, req)
		var bad *domain.ConfigError
		if errors.As(err, &bad) {
			return domain.ConfigErr("%s", bad.Msg)
		}
		if err != nil {
			return err
		}
		offers[i] = o
		heard(o)
	}
	b.Owner, b.States = map[string]int{}, make([]any, len(offers))
	take := func(selected bool) {
		for i, o := range offers {
			if o.Selected != selected {
				continue
			}
			b.States[i] = o.State
			for _, spec := range o.Specs {
				b.Specs = append(b.Specs, spec)
				b.Owner[spec.Name] = i
			}
			b.addInstructions(o.Instructions)
			if o.Layer != "" {
				b.Layers[o.Layer] = len(o.Instructions)
			}
		}
	}
	take(true)
	b.Specs = append(b.Specs, b.HandoffSpecs...)
	b.addInstructions(suffix)
	take(false)
	return nil
}

// Request is a model call of the agent on input: the history limit, the
// reasoning id policy and the tool choice applied; planning picks the
// tools (ToolDefs), conversationID names the conversation for the
// provider's prompt cache.
func (b *Built) Request(input []json.RawMessage, planning bool, toolChoice, conversationID string) ports.ModelRequest {
	a := b.Agent
	input = sessions.LimitHistory(input, a.Session.HistoryLimit)
	if a.Behavior.ReasoningItemIDPolicy == "omit" {
		input = sessions.WithoutReasoningIDs(input)
	}
	set := a.ModelSettings
	set.ToolChoice = toolChoice
	return ports.ModelRequest{Endpoint: b.Endpoint, Model: a.Model, Instructions: b.Instructions, Input: input,
		Tools: b.ToolDefs(planning), ToolChoice: toolChoice, Settings: set,
		OutputSchema: a.Guardrails.OutputSchema, PromptID: a.Session.PromptID, PromptVersion: a.Session.PromptVersion,
		ConversationID: conversationID}
}

// StopsAt says whether a call of the tool named name ends the run with its
// output as the final output (the agent's stop_at_tools).
func (b *Built) StopsAt(name string) bool {
	for _, stop := range strings.Split(b.Agent.Behavior.StopAtTools, ",") {
		if s := strings.TrimSpace(stop); s != "" && s == name {
			return true
		}
	}
	return false
}

// ChoiceAfterTools is the tool choice after a turn that used tools: a
// forcing choice returns to auto — otherwise a model forced to call tools
// never answers — unless the agent disables the reset.
func (b *Built) ChoiceAfterTools(choice string) string {
	if choice != "" && choice != "auto" && choice != "none" && !b.Agent.Behavior.DisableToolChoiceReset {
		return "auto"
	}
	return choice
}

// ProviderOf names the provider row of the agent's model (index 0) or of
// its index-th fallback.
func (b *Built) ProviderOf(index int) string {
	if index == 0 {
		return b.Agent.ProviderID
	}
	return b.Agent.Resilience.FallbackModels[index-1].ProviderID
}

package runs

import (
	"context"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// defaultMaxTurns bounds a run whose agent sets no max_turns.
const defaultMaxTurns = 10

// builtAgent is an agent ready to run: its endpoint resolved, its
// instructions assembled, its tools listed.
type builtAgent struct {
	agent        domain.Agent
	endpoint     ports.ProviderEndpoint
	instructions string
	tools        []ports.ToolDef
	handoffs     map[string]domain.Agent // by transfer tool name
}

func (b *builtAgent) maxTurns() int {
	if b.agent.Behavior.MaxTurns > 0 {
		return b.agent.Behavior.MaxTurns
	}
	return defaultMaxTurns
}

// configError is a run failure caused by configuration: the run ends with
// code config_error and a message naming what to fix.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configErr(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// build assembles an agent from its stored configuration, as its owner sees
// it: provider and key, the instruction layers, the tool surface.
func (s *Service) build(ctx context.Context, agentID string) (*builtAgent, error) {
	a, err := s.d.Config.FindAgent(ctx, agentID)
	if errs.Is(err, errs.NotFound) {
		return nil, configErr("the agent %s no longer exists", agentID)
	}
	if err != nil {
		return nil, err
	}
	if a.ProviderID == "" {
		return nil, configErr("agent %q names no provider: pick one in its settings", a.Name)
	}
	pr, err := s.d.Config.FindProvider(ctx, a.ProviderID)
	if errs.Is(err, errs.NotFound) {
		return nil, configErr("agent %q names a provider that no longer exists", a.Name)
	}
	if err != nil {
		return nil, err
	}
	key, err := s.d.Providers.APIKey(ctx, pr.ID)
	if err != nil {
		return nil, err
	}
	proxy, err := s.d.Settings.String(ctx, settings.KeyProxyURL)
	if err != nil {
		return nil, err
	}
	b := &builtAgent{
		agent:    a,
		endpoint: ports.ProviderEndpoint{Name: pr.Name, Type: pr.Type, API: pr.API, BaseURL: pr.BaseURL, APIKey: key, ProxyURL: proxy},
		handoffs: map[string]domain.Agent{},
	}
	if b.instructions, err = s.instructions(ctx, a); err != nil {
		return nil, err
	}
	for _, name := range a.Tools {
		if spec, ok := tools.Lookup(name); ok {
			b.tools = append(b.tools, ports.ToolDef{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
		}
	}
	for _, id := range a.Handoffs {
		t, err := s.d.Config.FindAgent(ctx, id)
		if errs.Is(err, errs.NotFound) || (err == nil && !a.MayReference(t.Ownership)) {
			continue // validated at save time; a target since deleted is simply not offered
		}
		if err != nil {
			return nil, err
		}
		spec := tools.Handoff(domain.HandoffToolName(t.Name), t.Name, t.Behavior.HandoffDescription)
		b.handoffs[spec.Name] = t
		b.tools = append(b.tools, ports.ToolDef{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
	}
	return b, nil
}

// instructions layers the global system prompt, the agent's instructions
// and the memories that reach it, within the memory budget.
func (s *Service) instructions(ctx context.Context, a domain.Agent) (string, error) {
	global, err := s.d.Settings.String(ctx, settings.KeySystemPrompt)
	if err != nil {
		return "", err
	}
	var parts []string
	if strings.TrimSpace(global) != "" {
		parts = append(parts, global)
	}
	if strings.TrimSpace(a.Instructions) != "" {
		parts = append(parts, a.Instructions)
	}
	mems, err := s.d.Config.ListMemories(ctx)
	if err != nil {
		return "", err
	}
	var block strings.Builder
	for _, m := range mems {
		if m.AgentID != "" && m.AgentID != a.ID {
			continue
		}
		line := "- " + m.Key + ": " + m.Content + "\n"
		if block.Len()+len(line) > domain.MemoryInjectionChars {
			break
		}
		block.WriteString(line)
	}
	if block.Len() > 0 {
		parts = append(parts, "Memories:\n"+block.String())
	}
	return strings.Join(parts, "\n\n"), nil
}

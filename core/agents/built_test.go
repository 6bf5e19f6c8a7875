package agents

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// config is the store as a builder reads it: agents and memories.
type config struct {
	agentsByID
	memories []domain.Memory
}

func (c config) ListMemories(context.Context) ([]domain.Memory, error) { return c.memories, nil }

// endpoints resolves every provider but "gone".
type endpoints struct{}

func (endpoints) Endpoint(_ context.Context, providerID, agentName string) (ports.ProviderEndpoint, error) {
	if providerID == "gone" {
		return ports.ProviderEndpoint{}, domain.ConfigErr("agent %q names a provider that no longer exists", agentName)
	}
	return ports.ProviderEndpoint{Name: providerID}, nil
}

// guards compiles the guardrail "ok" only.
type guards struct{}

func (guards) Checks(_ context.Context, names []string) ([]*domain.GuardrailCheck, error) {
	for _, n := range names {
		if n != "ok" {
			return nil, errs.Field("guardrails", "no guardrail %q", n)
		}
	}
	return make([]*domain.GuardrailCheck, len(names)), nil
}

// offering is a toolset making one fixed offer (or failing).
type offering struct {
	offer tools.Offer
	err   error
}

func (o offering) Offer(context.Context, tools.Request) (tools.Offer, error) { return o.offer, o.err }
func (offering) Call(context.Context, tools.RunCall, domain.Item) tools.Answer {
	return tools.Answer{}
}

func newBuilder(t *testing.T, c config, sets ...tools.Toolset) *Builder {
	t.Helper()
	box, _ := secrets.NewBox(nil)
	return NewBuilder(BuildDeps{Config: c, Endpoints: endpoints{}, Settings: settings.New(&porttest.SettingStore{}, box, porttest.NewClock(time.Unix(0, 0))),
		Guardrails: guards{}, Toolsets: sets})
}

func agent(id string, spec domain.AgentSpec) domain.Agent {
	return domain.Agent{ID: id, Ownership: domain.Ownership{Scope: domain.ScopeGlobal}, AgentSpec: spec}
}

func TestWhatConfigurationPreventsIsAConfigError(t *testing.T) {
	ctx := context.Background()
	c := config{agentsByID: agentsByID{
		"noprov": agent("noprov", domain.AgentSpec{Name: "NoProvider", ProviderID: "gone"}),
		"badg":   agent("badg", domain.AgentSpec{Name: "BadGuard", ProviderID: "p", Guardrails: domain.AgentGuardrails{Guardrails: []string{"nope"}}}),
		"bads": agent("bads", domain.AgentSpec{Name: "BadSchema", ProviderID: "p",
			Guardrails: domain.AgentGuardrails{OutputSchema: []byte(`{"type": 7}`)}}),
	}}
	b := newBuilder(t, c)
	for id, want := range map[string]string{"missing": "no longer exists", "noprov": "no longer exists", "badg": "nope",
		"bads": "unusable output_schema"} {
		_, err := b.Build(ctx, id, "")
		var ce *domain.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, want) {
			t.Errorf("Build(%s) = %v; want a config error saying %q", id, err, want)
		}
	}
}

func TestAnAgentIsEquippedInTheOrderItsRunsSeeTools(t *testing.T) {
	ctx := context.Background()
	target := agent("t", domain.AgentSpec{Name: "Target", ProviderID: "p"})
	a := agent("a", domain.AgentSpec{Name: "Front", ProviderID: "p", Instructions: "Be brief.", Handoffs: []string{"t"},
		Behavior: domain.AgentBehavior{MaxTurns: 3}})
	b := newBuilder(t, config{agentsByID: agentsByID{"a": a, "t": target}},
		offering{offer: tools.Offer{Specs: []tools.Spec{{Name: "brought", Origin: "task"}}, Instructions: "Run notes.", Layer: "tasks"}},
		offering{offer: tools.Offer{Selected: true, Specs: []tools.Spec{{Name: "chosen", Origin: "mcp"}}, Instructions: "Tool notes.",
			State: "kept"}},
	)
	built, err := b.Build(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	var heard int
	if err := b.Equip(ctx, built, tools.Request{Agent: a}, "Nobody reads this live.", func(tools.Offer) { heard++ }); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range built.Specs {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "chosen,"+domain.HandoffToolName("Target")+",brought" || heard != 2 {
		t.Fatalf("tools %s (heard %d offers); want the selected, the handoffs, then what the run brings", got, heard)
	}
	if !strings.HasPrefix(built.Instructions, "Be brief.") ||
		!strings.HasSuffix(built.Instructions, "Tool notes.\n\nNobody reads this live.\n\nRun notes.") {
		t.Fatalf("instructions %q", built.Instructions)
	}
	if built.Owner["chosen"] != 1 || built.States[1] != "kept" || built.Layers["tasks"] != len("Run notes.") || built.MaxTurns() != 3 {
		t.Fatalf("owner %v states %v layers %v", built.Owner, built.States, built.Layers)
	}
	if defs := built.ToolDefs(true); len(defs) != 2 {
		t.Fatalf("planning offers %d tools; want the handoff hidden", len(defs))
	}
	if _, ok := built.Offered("brought"); !ok || len(built.HandoffNames()) != 1 || !strings.Contains(string(built.Profile()), `"task"`) {
		t.Fatal("the built agent does not answer for its tools")
	}
	failing := newBuilder(t, config{agentsByID: agentsByID{"a": a}}, offering{err: &tools.ConfigError{Msg: "the project is gone"}})
	built, _ = failing.Build(ctx, "a", "")
	var ce *domain.ConfigError
	if err := failing.Equip(ctx, built, tools.Request{Agent: a}, "", func(tools.Offer) {}); !errors.As(err, &ce) || ce.Msg != "the project is gone" {
		t.Fatalf("a toolset's config error came back as %v", err)
	}
}

func TestToolChoiceResetsAfterToolsUnlessDisabled(t *testing.T) {
	for _, c := range []struct {
		choice  string
		disable bool
		want    string
	}{{"required", false, "auto"}, {"required", true, "required"}, {"read_file", false, "auto"}, {"none", false, "none"}, {"", false, ""}} {
		b := &Built{Agent: domain.Agent{AgentSpec: domain.AgentSpec{Behavior: domain.AgentBehavior{DisableToolChoiceReset: c.disable}}}}
		if got := b.ChoiceAfterTools(c.choice); got != c.want {
			t.Errorf("%q (disable %v) → %q, want %q", c.choice, c.disable, got, c.want)
		}
	}
}

func TestAnAgentsRulesShapeItsCalls(t *testing.T) {
	b := &Built{Agent: domain.Agent{AgentSpec: domain.AgentSpec{Model: "m", ProviderID: "p0",
		Behavior:   domain.AgentBehavior{StopAtTools: " report , done", ReasoningItemIDPolicy: "omit"},
		Resilience: domain.AgentResilience{FallbackModels: []domain.FallbackModel{{ProviderID: "p1", Model: "m1"}}}}},
		Instructions: "Be brief.", Specs: []tools.Spec{{Name: "report"}}}
	if !b.StopsAt("report") || !b.StopsAt("done") || b.StopsAt("other") || b.StopsAt("") {
		t.Fatal("stop_at_tools is not read as a list of names")
	}
	if b.ProviderOf(0) != "p0" || b.ProviderOf(1) != "p1" {
		t.Fatalf("providers %s, %s", b.ProviderOf(0), b.ProviderOf(1))
	}
	req := b.Request([]json.RawMessage{json.RawMessage(`{"type":"reasoning","id":"rs_1"}`)}, false, "required", "s1")
	if req.Model != "m" || req.Instructions != "Be brief." || req.ToolChoice != "required" || req.Settings.ToolChoice != "required" ||
		len(req.Tools) != 1 || req.ConversationID != "s1" || strings.Contains(string(req.Input[0]), "rs_1") {
		t.Fatalf("request %+v", req)
	}
}

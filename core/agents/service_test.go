package agents_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin = domain.Principal{User: domain.User{ID: "admin", Role: domain.RoleAdmin}}
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	t0    = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

// fixture is an agents.Service on an in-memory config store with the real
// providers and workflows services beside it: ann's private provider
// "mine" (OpenAI Chat Completions), a global "shared" one (OpenAI
// Responses) and a global Anthropic one, a guardrail "pii", and a skill
// "style" (global) that exists.
type fixture struct {
	svc       *agents.Service
	config    *porttest.ConfigStore
	clock     *porttest.Clock
	workflows *workflows.Service
	mine      domain.Provider
	shared    domain.Provider
	claude    domain.Provider
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := &porttest.IDs{}
	f := &fixture{config: &porttest.ConfigStore{}, clock: porttest.NewClock(t0)}
	skills := func(_ context.Context, _ domain.Ownership, id string) (bool, error) { return id == "style", nil }
	natives := tools.Natives{"weather": {Spec: tools.Spec{Name: "weather", Description: "the forecast"}}}
	f.svc = agents.New(agents.Deps{Store: f.config, IDs: ids, Clock: f.clock, Skills: skills, Natives: natives})
	f.workflows = workflows.NewService(f.config, ids, f.clock)
	provs, err := providers.New(providers.Deps{Store: f.config, Box: box, IDs: ids, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p domain.Principal, scope domain.Scope, in providers.Input) domain.Provider {
		pr, err := provs.Create(ctx, p, scope, in)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	f.mine = mk(ann, domain.ScopePrivate, providers.Input{Name: "mine", Type: "openai", API: "chat_completions", APIKey: "k"})
	f.shared = mk(admin, domain.ScopeGlobal, providers.Input{Name: "shared", Type: "openai", APIKey: "k"})
	f.claude = mk(admin, domain.ScopeGlobal, providers.Input{Name: "claude", Type: "anthropic", APIKey: "k"})
	g := domain.Guardrail{ID: "g1", Name: "pii", Stages: []domain.GuardrailStage{domain.StageInput}, Mode: domain.GuardrailMode("regex"),
		Pattern: "secret", CreatedAt: t0, UpdatedAt: t0}
	if err := f.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertGuardrail(ctx, g) }); err != nil {
		t.Fatal(err)
	}
	return f
}

// spec is an agent on provider pr with model "m".
func spec(name string, pr domain.Provider) domain.AgentSpec {
	return domain.AgentSpec{Name: name, Model: "m", ProviderID: pr.ID}
}

func (f *fixture) create(t *testing.T, p domain.Principal, scope domain.Scope, s domain.AgentSpec) domain.Agent {
	t.Helper()
	a, err := f.svc.Create(context.Background(), p, scope, s)
	if err != nil {
		t.Fatalf("create %s: %v", s.Name, err)
	}
	return a
}

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
}

// An agent is its author's: private unless an admin makes it global,
// seen (listed, read, its tools) by its owner and admins only, its lists
// always arrays.
func TestAgentsBelongToTheirAuthor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a := f.create(t, ann, "", spec("coder", f.mine))
	if a.Scope != domain.ScopePrivate || a.OwnerID != ann.User.ID || !a.CreatedAt.Equal(t0) {
		t.Fatalf("created = %+v", a)
	}
	if a.Tools == nil || a.Handoffs == nil || a.Guardrails.Guardrails == nil || a.Approval.ApproveTools == nil ||
		a.Resilience.FallbackModels == nil || a.Skills != nil {
		t.Fatalf("lists not normalized: %+v", a.AgentSpec)
	}
	if got, err := f.svc.Get(ctx, ann, a.ID); err != nil || got.Name != "coder" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	_, err := f.svc.Get(ctx, bob, a.ID)
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Tools(ctx, bob, a.ID)
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Get(ctx, ann, "missing")
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Create(ctx, ann, domain.ScopeGlobal, spec("shared", f.shared))
	wantCode(t, err, errs.Forbidden)
	g := f.create(t, admin, domain.ScopeGlobal, spec("helper", f.shared))
	if list, err := f.svc.List(ctx, ann); err != nil || len(list) != 2 || list[0].ID != g.ID || list[1].ID != a.ID {
		t.Fatalf("ann's list = %+v, %v", list, err)
	}
	if list, _ := f.svc.List(ctx, bob); len(list) != 1 || list[0].ID != g.ID {
		t.Fatalf("bob's list = %+v", list)
	}
}

// Every reference is checked under the ownership rules, every fault on
// its field: another person's private provider does not exist, a global
// agent uses only global rows, a provider's type must support the knobs
// set, guardrails, handoffs, skills and tools must exist.
func TestAnAgentsReferencesAreChecked(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	bobs := f.create(t, bob, domain.ScopePrivate, spec("bobs", f.shared))
	s := spec("", f.mine)
	s.Session.PromptID = "pmpt_1" // not on Chat Completions
	s.Resilience.FallbackModels = []domain.FallbackModel{{ProviderID: "nope", Model: "m"}, {ProviderID: f.shared.ID, Model: "m2"}}
	s.Guardrails.Guardrails = []string{"pii", "nsfw"}
	s.Handoffs = []string{bobs.ID, "missing"}
	empty := []string{}
	s.Skills = append(empty, "style", "unknown")
	s.Tools = []string{"weather", "teleport", "srv__tool"}
	_, err := f.svc.Create(ctx, ann, domain.ScopePrivate, s)
	fields := errs.FieldsOf(err)
	for _, field := range []string{"name", "session.prompt_id", "resilience.fallback_models[0].provider_id", "guardrails.guardrails[1]",
		"handoffs[0]", "handoffs[1]", "skills[1]", "tools[1]", "tools[2]"} {
		if fields[field] == "" {
			t.Errorf("no complaint about %s", field)
		}
	}
	for _, field := range []string{"guardrails.guardrails[0]", "skills[0]", "tools[0]", "resilience.fallback_models[1].provider_id"} {
		if fields[field] != "" {
			t.Errorf("a complaint about %s: %s", field, fields[field])
		}
	}

	verbose := spec("verbose", f.claude)
	verbose.ModelSettings.Verbosity = "low"
	_, err = f.svc.Create(ctx, admin, domain.ScopeGlobal, verbose)
	if errs.FieldsOf(err)["model_settings.verbosity"] == "" {
		t.Fatalf("verbosity on Anthropic: %v", err)
	}
	onPrivate := spec("global on a private provider", f.mine)
	_, err = f.svc.Create(ctx, admin, domain.ScopeGlobal, onPrivate)
	if errs.FieldsOf(err)["provider_id"] == "" {
		t.Fatalf("a global agent on a private provider: %v", err)
	}
	_, err = f.svc.Create(ctx, bob, domain.ScopePrivate, spec("on ann's", f.mine))
	if errs.FieldsOf(err)["provider_id"] != "no such provider" {
		t.Fatalf("bob on ann's provider: %v", err)
	}
	mine := f.create(t, ann, domain.ScopePrivate, spec("mine", f.shared))
	handsOff := spec("global handing off", f.shared)
	handsOff.Handoffs = []string{mine.ID}
	_, err = f.svc.Create(ctx, admin, domain.ScopeGlobal, handsOff)
	if errs.FieldsOf(err)["handoffs[0]"] == "" {
		t.Fatalf("a global agent handing off to a private one: %v", err)
	}
	withSchema := spec("structured", f.shared)
	withSchema.Guardrails.OutputSchema = json.RawMessage(" null ")
	if a := f.create(t, ann, domain.ScopePrivate, withSchema); a.Guardrails.OutputSchema != nil {
		t.Fatalf("a null schema was kept: %s", a.Guardrails.OutputSchema)
	}
}

// An update replaces the spec (an agent may not hand off to itself); only
// the author, or an admin on a global agent, edits.
func TestUpdatingAnAgent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a := f.create(t, ann, domain.ScopePrivate, spec("coder", f.shared))
	f.clock.Advance(time.Minute)
	s := spec("coder v2", f.shared)
	got, err := f.svc.Update(ctx, ann, a.ID, s)
	if err != nil || got.Name != "coder v2" || !got.UpdatedAt.Equal(t0.Add(time.Minute)) || got.OwnerID != ann.User.ID {
		t.Fatalf("update = %+v, %v", got, err)
	}
	s.Handoffs = []string{a.ID}
	_, err = f.svc.Update(ctx, ann, a.ID, s)
	if errs.FieldsOf(err)["handoffs[0]"] != "an agent cannot hand off to itself" {
		t.Fatalf("a handoff to itself: %v", err)
	}
	_, err = f.svc.Update(ctx, admin, a.ID, spec("x", f.shared))
	wantCode(t, err, errs.Forbidden)
	_, err = f.svc.Update(ctx, bob, a.ID, spec("x", f.shared))
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Update(ctx, ann, "missing", spec("x", f.shared))
	wantCode(t, err, errs.NotFound)
	if stored, _ := f.svc.Get(ctx, ann, a.ID); stored.Name != "coder v2" {
		t.Fatalf("a refused update changed the agent: %+v", stored)
	}
}

// An agent goes only while nothing leans on it: no other agent hands off
// to it and no workflow runs it.
func TestDeletingAnAgentInUseIsRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	target := f.create(t, ann, domain.ScopePrivate, spec("target", f.shared))
	lead := spec("lead", f.shared)
	lead.Handoffs = []string{target.ID}
	leader := f.create(t, ann, domain.ScopePrivate, lead)
	wantCode(t, f.svc.Delete(ctx, bob, target.ID), errs.NotFound)
	err := f.svc.Delete(ctx, ann, target.ID)
	wantCode(t, err, errs.Conflict)
	if errs.MessageOf(err) != "1 agent(s) hand off to this one; remove it from their handoffs first" {
		t.Fatalf("refusal = %v", err)
	}
	if err := f.svc.Delete(ctx, ann, leader.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.workflows.Create(ctx, ann, domain.ScopePrivate, domain.WorkflowSpec{Name: "flow", Description: "d",
		Steps: []domain.WorkflowStep{{Name: "s", Agent: target.ID, Prompt: "p"}}}); err != nil {
		t.Fatal(err)
	}
	err = f.svc.Delete(ctx, admin, target.ID)
	wantCode(t, err, errs.Conflict)
	if errs.MessageOf(err) != `1 workflow(s) run this agent in a step ("flow" first); change those steps first` {
		t.Fatalf("refusal = %v", err)
	}
	free := f.create(t, ann, domain.ScopePrivate, spec("free", f.shared))
	if err := f.svc.Delete(ctx, admin, free.ID); err != nil {
		t.Fatalf("an admin's delete: %v", err)
	}
	wantCode(t, f.svc.Delete(ctx, ann, free.ID), errs.NotFound)
}

// Publishing is an admin's and needs the agent's references global
// already; unpublishing is refused while a shared (or another person's)
// agent or workflow leans on it.
func TestPublishingAnAgentKeepsReferencesValid(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	onPrivate := f.create(t, ann, domain.ScopePrivate, spec("on mine", f.mine))
	_, err := f.svc.SetScope(ctx, admin, onPrivate.ID, domain.ScopeGlobal)
	wantCode(t, err, errs.Conflict)

	a := f.create(t, ann, domain.ScopePrivate, spec("helper", f.shared))
	_, err = f.svc.SetScope(ctx, ann, a.ID, domain.ScopeGlobal)
	wantCode(t, err, errs.Forbidden)
	f.clock.Advance(time.Hour)
	got, err := f.svc.SetScope(ctx, admin, a.ID, domain.ScopeGlobal)
	if err != nil || got.Scope != domain.ScopeGlobal || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("publish = %+v, %v", got, err)
	}
	lead := spec("shared lead", f.shared)
	lead.Handoffs = []string{a.ID}
	f.create(t, admin, domain.ScopeGlobal, lead)
	_, err = f.svc.SetScope(ctx, ann, a.ID, domain.ScopePrivate)
	wantCode(t, err, errs.Conflict)
	if errs.MessageOf(err) != "a shared or another person's agent hands off to this one; it must stay global" {
		t.Fatalf("refusal = %v", err)
	}

	b := f.create(t, admin, domain.ScopeGlobal, spec("worker", f.shared))
	if _, err := f.workflows.Create(ctx, admin, domain.ScopeGlobal, domain.WorkflowSpec{Name: "shared flow", Description: "d",
		Steps: []domain.WorkflowStep{{Name: "s", Agent: b.ID, Prompt: "p"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.SetScope(ctx, admin, b.ID, domain.ScopePrivate)
	wantCode(t, err, errs.Conflict)
	if errs.MessageOf(err) != `the workflow "shared flow" (shared, or another person's) runs this agent; it must stay global` {
		t.Fatalf("refusal = %v", err)
	}
	c := f.create(t, admin, domain.ScopeGlobal, spec("loner", f.shared))
	if got, err := f.svc.SetScope(ctx, admin, c.ID, domain.ScopePrivate); err != nil || got.Scope != domain.ScopePrivate {
		t.Fatalf("unpublish = %+v, %v", got, err)
	}
	_, err = f.svc.SetScope(ctx, admin, "missing", domain.ScopePrivate)
	wantCode(t, err, errs.NotFound)
}

// The tool surface an agent would get: the checklist, its selected
// built-ins (none are selectable today) and Go tools, the task verbs unless subagents are off, the
// authoring tools when on, and a transfer per handoff target it may still
// use.
func TestAnAgentsToolSurface(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	names := func(specs []tools.Spec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	if sel := names(f.svc.Selectable()); len(sel) != len(tools.Selectable)+1 || sel[len(sel)-1] != "weather" {
		t.Fatalf("selectable = %v", sel)
	}
	target := f.create(t, ann, domain.ScopePrivate, spec("Reviewer", f.shared))
	s := spec("lead", f.shared)
	s.Tools = []string{"weather"}
	s.Handoffs = []string{target.ID}
	s.Behavior.WorkflowAuthoring = true
	lead := f.create(t, ann, domain.ScopePrivate, s)
	got, err := f.svc.Tools(ctx, ann, lead.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{tools.TodoWrite.Name, "weather"}
	for _, spec := range tools.Tasks {
		want = append(want, spec.Name)
	}
	want = append(want, tools.GetWorkflow.Name, tools.SaveWorkflow.Name, domain.HandoffToolName("Reviewer"))
	if !slices.Equal(names(got), want) {
		t.Fatalf("tools = %v, want %v", names(got), want)
	}

	off := false
	s.Behavior.Subagents, s.Behavior.WorkflowAuthoring = &off, false
	if _, err := f.svc.Update(ctx, ann, lead.ID, s); err != nil {
		t.Fatal(err)
	}
	// A handoff target that went away is left out (the run reports it).
	if err := f.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, target.ID) }); err != nil {
		t.Fatal(err)
	}
	got, _ = f.svc.Tools(ctx, ann, lead.ID)
	if !slices.Equal(names(got), []string{tools.TodoWrite.Name, "weather"}) {
		t.Fatalf("tools without subagents = %v", names(got))
	}
}

// A compiled output_schema checks a structured final output; a schema
// that is no object schema does not compile.
func TestAnOutputSchemaChecksAFinalOutput(t *testing.T) {
	s, err := agents.CompileOutputSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(`{"n":3}`); err != nil {
		t.Fatalf("a matching output: %v", err)
	}
	for _, bad := range []string{`{"n":"three"}`, `{}`, `not json`} {
		if err := s.Check(bad); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
	if _, err := agents.CompileOutputSchema(json.RawMessage(`{"type":"array"}`)); err == nil {
		t.Fatal("an array schema compiled")
	}
}

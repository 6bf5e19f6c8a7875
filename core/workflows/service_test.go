package workflows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
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

// fixture is a workflows.Service on an in-memory config store holding
// ann's private agent "writer", bob's private "spy" and a global
// "reviewer".
type fixture struct {
	svc    *workflows.Service
	config *porttest.ConfigStore
	clock  *porttest.Clock
	agents map[string]domain.Agent // by name
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{config: &porttest.ConfigStore{}, clock: porttest.NewClock(t0), agents: map[string]domain.Agent{}}
	f.svc = workflows.NewService(f.config, &porttest.IDs{}, f.clock)
	f.agent(t, "writer", domain.ScopePrivate, ann.User.ID)
	f.agent(t, "spy", domain.ScopePrivate, bob.User.ID)
	f.agent(t, "reviewer", domain.ScopeGlobal, admin.User.ID)
	return f
}

func (f *fixture) agent(t *testing.T, name string, scope domain.Scope, owner string) domain.Agent {
	t.Helper()
	a := domain.Agent{ID: "agent-" + name + "-" + owner, Ownership: domain.Ownership{Scope: scope, OwnerID: owner},
		AgentSpec: domain.AgentSpec{Name: name, Model: "m"}, CreatedAt: t0, UpdatedAt: t0}
	err := f.config.InConfigTx(context.Background(), func(tx ports.ConfigTx) error { return tx.InsertAgent(context.Background(), a) })
	if err != nil {
		t.Fatal(err)
	}
	f.agents[name] = a
	return a
}

// spec is a two-step definition: draft (writer) then review (reviewer).
func (f *fixture) spec(name string) domain.WorkflowSpec {
	return domain.WorkflowSpec{Name: name, Description: "drafts and reviews", Steps: []domain.WorkflowStep{
		{Name: "draft", Agent: f.agents["writer"].ID, Prompt: "write it"},
		{Name: "review", Agent: f.agents["reviewer"].ID, Prompt: "check it", Gate: true, OnFailure: "draft"},
	}}
}

func (f *fixture) create(t *testing.T, p domain.Principal, scope domain.Scope, spec domain.WorkflowSpec) domain.Workflow {
	t.Helper()
	w, err := f.svc.Create(context.Background(), p, scope, spec)
	if err != nil {
		t.Fatalf("create %s: %v", spec.Name, err)
	}
	return w
}

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
}

// Creating assigns step ids and resolves edges written by step name; a
// workflow is private unless an admin makes it global, and a member's
// private one is seen by its owner (and admins) only.
func TestCreatedWorkflowsBelongToTheirAuthor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := f.create(t, ann, "", f.spec("  review loop  "))
	if w.Scope != domain.ScopePrivate || w.OwnerID != ann.User.ID || w.Name != "review loop" || !w.CreatedAt.Equal(t0) {
		t.Fatalf("created = %+v", w)
	}
	draft, review := w.Steps[0], w.Steps[1]
	if draft.ID == "" || review.ID == "" || draft.ID == review.ID || review.OnFailure != draft.ID {
		t.Fatalf("steps = %+v, want ids and the edge by id", w.Steps)
	}
	if got, err := f.svc.Get(ctx, ann, w.ID); err != nil || got.Name != w.Name {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := f.svc.Get(ctx, admin, w.ID); err != nil {
		t.Fatalf("an admin's get: %v", err)
	}
	_, err := f.svc.Get(ctx, bob, w.ID)
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Create(ctx, ann, domain.ScopeGlobal, f.spec("shared"))
	wantCode(t, err, errs.Forbidden)
	_, err = f.svc.Create(ctx, ann, "team", f.spec("shared"))
	wantCode(t, err, errs.Validation)

	global := f.spec("shared")
	global.Steps = global.Steps[1:2]
	global.Steps[0].OnFailure = ""
	g := f.create(t, admin, domain.ScopeGlobal, global)
	// A member lists others' shared workflows first, then their own.
	list, err := f.svc.List(ctx, ann)
	if err != nil || len(list) != 2 || list[0].ID != g.ID || list[1].ID != w.ID {
		t.Fatalf("ann's list = %+v, %v", list, err)
	}
	if list, _ := f.svc.List(ctx, bob); len(list) != 1 || list[0].ID != g.ID {
		t.Fatalf("bob's list = %+v", list)
	}
	if usable, _ := f.svc.Usable(ctx, bob.User.ID); len(usable) != 1 || usable[0].ID != g.ID {
		t.Fatalf("bob's usable = %+v", usable)
	}
}

// A definition is validated whole against the agents its holder may use:
// another member's private agent is no agent, and a global workflow may
// not lean on anyone's private one.
func TestADefinitionIsValidatedAgainstUsableAgents(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	spec := f.spec("")
	spec.Description = " "
	spec.Steps[0].Agent = f.agents["spy"].ID
	spec.Steps[1].OnSuccess = "nowhere"
	_, err := f.svc.Create(ctx, ann, domain.ScopePrivate, spec)
	fields := errs.FieldsOf(err)
	for _, field := range []string{"name", "description", "steps[0].agent", "steps[1].on_success"} {
		if fields[field] == "" {
			t.Errorf("no complaint about %s in %v", field, fields)
		}
	}
	_, err = f.svc.Create(ctx, admin, domain.ScopeGlobal, f.spec("global with a private step"))
	if errs.FieldsOf(err)["steps[0].agent"] == "" {
		t.Fatalf("a global workflow on a private agent: %v", err)
	}
}

// An update keeps the ids of the steps it sends back and gives new steps
// new ones; an id that is none of the workflow's steps is refused. Only
// the author edits a private workflow; its author or an admin deletes it.
func TestUpdatesKeepStepIdentity(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	w := f.create(t, ann, domain.ScopePrivate, f.spec("loop"))
	f.clock.Advance(time.Minute)
	spec := w.WorkflowSpec
	spec.Steps = append(spec.Steps, domain.WorkflowStep{Name: "publish", Agent: f.agents["writer"].ID, Prompt: "ship it"})
	got, err := f.svc.Update(ctx, ann, w.ID, spec)
	if err != nil || len(got.Steps) != 3 || got.Steps[0].ID != w.Steps[0].ID || got.Steps[2].ID == "" || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("update = %+v, %v", got, err)
	}
	spec.Steps[0].ID = "forged"
	_, err = f.svc.Update(ctx, ann, w.ID, spec)
	if errs.FieldsOf(err)["steps[0].id"] == "" {
		t.Fatalf("a forged step id: %v", err)
	}
	_, err = f.svc.Update(ctx, admin, w.ID, w.WorkflowSpec)
	wantCode(t, err, errs.Forbidden)
	_, err = f.svc.Update(ctx, bob, w.ID, w.WorkflowSpec)
	wantCode(t, err, errs.NotFound)
	_, err = f.svc.Update(ctx, ann, "missing", w.WorkflowSpec)
	wantCode(t, err, errs.NotFound)

	wantCode(t, f.svc.Delete(ctx, bob, w.ID), errs.NotFound)
	if err := f.svc.Delete(ctx, admin, w.ID); err != nil {
		t.Fatalf("an admin's delete: %v", err)
	}
	_, err = f.svc.Get(ctx, ann, w.ID)
	wantCode(t, err, errs.NotFound)
	wantCode(t, f.svc.Delete(ctx, ann, w.ID), errs.NotFound)
}

// Publishing is an admin's and must leave every reference valid;
// unpublishing is an admin's or the author's.
func TestPublishingKeepsReferencesValid(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	onPrivate := f.create(t, ann, domain.ScopePrivate, f.spec("on writer"))
	_, err := f.svc.SetScope(ctx, admin, onPrivate.ID, domain.ScopeGlobal)
	wantCode(t, err, errs.Conflict)
	if !strings.Contains(errs.MessageOf(err), "as a global workflow it would break a reference") {
		t.Fatalf("refusal = %v", err)
	}

	spec := f.spec("on reviewer")
	spec.Steps = spec.Steps[1:]
	spec.Steps[0].OnFailure = ""
	w := f.create(t, ann, domain.ScopePrivate, spec)
	_, err = f.svc.SetScope(ctx, ann, w.ID, domain.ScopeGlobal)
	wantCode(t, err, errs.Forbidden)
	f.clock.Advance(time.Hour)
	got, err := f.svc.SetScope(ctx, admin, w.ID, domain.ScopeGlobal)
	if err != nil || got.Scope != domain.ScopeGlobal || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("publish = %+v, %v", got, err)
	}
	_, err = f.svc.SetScope(ctx, admin, w.ID, domain.ScopeGlobal)
	wantCode(t, err, errs.Conflict)
	_, err = f.svc.SetScope(ctx, bob, w.ID, domain.ScopePrivate)
	wantCode(t, err, errs.Forbidden)
	if got, err = f.svc.SetScope(ctx, ann, w.ID, domain.ScopePrivate); err != nil || got.Scope != domain.ScopePrivate {
		t.Fatalf("the author's unpublish = %+v, %v", got, err)
	}
	_, err = f.svc.SetScope(ctx, ann, "missing", domain.ScopePrivate)
	wantCode(t, err, errs.NotFound)
}

// A name means the user's own private workflow first, else a global one,
// whatever its case; an unknown name is not_found saying so.
func TestByNamePrefersTheUsersOwn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	spec := f.spec("Triage")
	spec.Steps = spec.Steps[1:]
	spec.Steps[0].OnFailure = ""
	global := f.create(t, admin, domain.ScopeGlobal, spec)
	mine := f.create(t, ann, domain.ScopePrivate, spec)
	if got, err := f.svc.ByName(ctx, ann.User.ID, " triage "); err != nil || got.ID != mine.ID {
		t.Fatalf("ann's triage = %s, %v", got.ID, err)
	}
	if got, err := f.svc.ByName(ctx, bob.User.ID, "TRIAGE"); err != nil || got.ID != global.ID {
		t.Fatalf("bob's triage = %s, %v", got.ID, err)
	}
	_, err := f.svc.ByName(ctx, bob.User.ID, "deploy")
	wantCode(t, err, errs.NotFound)
	if errs.MessageOf(err) != `there is no workflow named "deploy"` {
		t.Fatalf("message = %q", errs.MessageOf(err))
	}
}

// An agent authors workflows by name — steps, agents and edges — and only
// the person's own private ones: a save creates, or replaces the one of
// that name keeping its steps' ids; a save that could not be stored is
// refused before anyone is asked, naming the agents on offer.
func TestAgentsAuthorWorkflowsByName(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.agent(t, "Reviewer", domain.ScopePrivate, ann.User.ID) // ann's own, over the global one
	if names := f.svc.AgentNames(ctx, ann.User.ID); strings.Join(names, ",") != "Reviewer,writer" {
		t.Fatalf("ann's agents = %v", names)
	}
	args := `{"name":"loop","description":"d","steps":[
		{"name":"draft","agent":"writer","prompt":"write"},
		{"name":"review","agent":"Reviewer","prompt":"check","gate":true,"on_failure":"draft"}]}`
	for _, c := range []struct{ args, field, msg string }{
		{`{"name":"x","colour":"red"}`, "", "save_workflow takes"},
		{strings.Replace(args, `"writer"`, `"spy"`, 1), "steps[0].agent", `there is no agent named "spy": the agents on offer are Reviewer, writer`},
		{strings.Replace(args, `"on_failure":"draft"`, `"on_failure":"nowhere"`, 1), "steps[1].on_failure", ""},
	} {
		err := f.svc.CheckSave(ctx, ann.User.ID, c.args)
		switch {
		case errs.CodeOf(err) != errs.Validation:
			t.Errorf("%s: %v, want validation", c.args, err)
		case c.field != "" && errs.FieldsOf(err)[c.field] == "":
			t.Errorf("%s: no complaint about %s in %v", c.args, c.field, errs.FieldsOf(err))
		case !strings.Contains(errs.MessageOf(err)+errs.FieldsOf(err)[c.field], c.msg):
			t.Errorf("%s: %v, want %q", c.args, err, c.msg)
		}
	}
	if err := f.svc.CheckSave(ctx, ann.User.ID, args); err != nil {
		t.Fatal(err)
	}
	out, err := f.svc.SaveNamed(ctx, ann.User.ID, args)
	if err != nil || out != `Created workflow "loop" (2 steps). spawn_task(workflow="loop", prompt=<brief>) starts it.` {
		t.Fatalf("save = %q, %v", out, err)
	}
	created, err := f.svc.ByName(ctx, ann.User.ID, "loop")
	if err != nil || created.Steps[1].Agent != f.agents["Reviewer"].ID || created.Steps[1].OnFailure != created.Steps[0].ID {
		t.Fatalf("saved = %+v, %v", created.Steps, err)
	}

	got, err := f.svc.GetNamed(ctx, ann.User.ID, "LOOP")
	var named workflows.NamedSpec
	if err != nil || json.Unmarshal([]byte(got), &named) != nil || named.Steps[1].Agent != "Reviewer" || named.Steps[1].OnFailure != "draft" {
		t.Fatalf("get_workflow = %s, %v", got, err)
	}
	_, err = f.svc.GetNamed(ctx, ann.User.ID, "nope")
	wantCode(t, err, errs.NotFound)

	// Saving the name again replaces it, keeping the steps it names.
	again := strings.Replace(args, `"prompt":"write"`, `"prompt":"write better"`, 1)
	preview, err := f.svc.Preview(ctx, ann.User.ID, again)
	if err != nil || !preview.Replaces || !strings.Contains(preview.Definition, "1. draft — agent writer\n   | write better") {
		t.Fatalf("preview = %+v, %v", preview, err)
	}
	var changed []string
	for _, d := range preview.Diff {
		if d.Op != domain.DiffSame {
			changed = append(changed, d.Op+d.Text)
		}
	}
	if strings.Join(changed, "\n") != "-   | write\n+   | write better" {
		t.Fatalf("diff = %q", changed)
	}
	out, err = f.svc.SaveNamed(ctx, ann.User.ID, again)
	if err != nil || !strings.HasPrefix(out, `Updated workflow "loop"`) {
		t.Fatalf("save again = %q, %v", out, err)
	}
	updated, _ := f.svc.ByName(ctx, ann.User.ID, "loop")
	if updated.ID != created.ID || updated.Steps[0].ID != created.Steps[0].ID || updated.Steps[0].Prompt != "write better" {
		t.Fatalf("replaced = %+v", updated)
	}
	if p, err := f.svc.Preview(ctx, ann.User.ID, strings.Replace(args, `"loop"`, `"fresh"`, 1)); err != nil || p.Replaces || p.Diff != nil {
		t.Fatalf("a new workflow's preview = %+v, %v", p, err)
	}
	if _, err := f.svc.Preview(ctx, ann.User.ID, `[]`); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a malformed preview: %v", err)
	}
	if _, err := f.svc.SaveNamed(ctx, ann.User.ID, `{`); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a malformed save: %v", err)
	}
	if _, err := f.svc.SaveNamed(ctx, bob.User.ID, args); errs.FieldsOf(err)["steps[0].agent"] == "" {
		t.Fatalf("bob saving with ann's agent: %v", err)
	}
}

// Draw writes one fact a line — budget, each step's agent, prompt, edges,
// gate words and flags — so a diff of two drawings says what changed.
func TestDrawSaysEveryFactOnItsOwnLine(t *testing.T) {
	got := workflows.Draw(workflows.NamedSpec{Name: "ci", Description: "builds\n and checks", Budget: domain.WorkflowBudget{MaxSteps: 9},
		Steps: []workflows.NamedStep{
			{Name: "build", Agent: "coder", Prompt: "make\nit", PauseBefore: true, CompactBefore: true},
			{Name: "check", Agent: "qa", Prompt: "test", Gate: true, GateFail: "NOPE", OnFailure: "build"},
		}})
	want := strings.Join([]string{
		"workflow ci",
		"description: builds and checks",
		"budget: max_steps 9, max_tokens 0, max_minutes 0, max_laps 3",
		"1. build — agent coder",
		"   | make",
		"   | it",
		"   on success → next step; on failure → fail the workflow",
		"   pause before: a person approves",
		"   compact before",
		"2. check — agent qa",
		"   | test",
		"   gate: PASS → end, NOPE → build",
	}, "\n")
	if got != want {
		t.Fatalf("drawing:\n%s\nwant:\n%s", got, want)
	}
}

// A verdict names itself in logs and messages.
func TestVerdictsNameThemselves(t *testing.T) {
	for v, want := range map[workflows.Verdict]string{workflows.Pass: "pass", workflows.Fail: "fail", workflows.Unreported: "unreported"} {
		if v.String() != want {
			t.Errorf("%d = %q, want %q", v, v.String(), want)
		}
	}
}

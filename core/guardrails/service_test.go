package guardrails_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	member = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	admin  = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
	start  = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

func setup(t *testing.T) (*guardrails.Service, *porttest.ConfigStore, *porttest.Clock) {
	t.Helper()
	store, clock := &porttest.ConfigStore{}, porttest.NewClock(start)
	return guardrails.New(store, &porttest.IDs{}, clock), store, clock
}

func secrets() domain.Guardrail {
	return domain.Guardrail{Name: "no-secrets", Stages: []domain.GuardrailStage{domain.StageOutput}, Mode: domain.ModeRegex, Pattern: `sk-[a-z0-9]+`}
}

// agentUsing stores an agent naming the guardrail (as written).
func agentUsing(t *testing.T, store *porttest.ConfigStore, name string) {
	t.Helper()
	ctx := context.Background()
	a := domain.Agent{ID: "agent-" + name, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "ann"},
		AgentSpec: domain.AgentSpec{Name: "agent-" + name, Model: "m"}}
	a.Guardrails.Guardrails = []string{name}
	if err := store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, a) }); err != nil {
		t.Fatal(err)
	}
}

// TestGuardrailsAreHostConfigurationAdminsWrite holds that everyone reads
// guardrails, only admins write them, and a write stamps its times.
func TestGuardrailsAreHostConfigurationAdminsWrite(t *testing.T) {
	svc, _, clock := setup(t)
	ctx := context.Background()
	if _, err := svc.Create(ctx, member, secrets()); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member creates a guardrail: %v", err)
	}
	g, err := svc.Create(ctx, admin, domain.Guardrail{Name: "x", Builtin: true, Stages: []domain.GuardrailStage{domain.StageInput},
		Mode: domain.ModeMaxLength, MaxChars: 10})
	if err != nil || g.ID == "" || g.Builtin || !g.CreatedAt.Equal(start) || !g.UpdatedAt.Equal(start) {
		t.Fatalf("created %+v, %v; want an id, not builtin, made now", g, err)
	}
	if _, err := svc.Create(ctx, admin, domain.Guardrail{Name: "X", Stages: []domain.GuardrailStage{domain.StageInput},
		Mode: domain.ModeMaxLength, MaxChars: 5}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken name: %v", err)
	}
	if got, err := svc.Get(ctx, g.ID); err != nil || got.Name != "x" {
		t.Fatalf("get %+v, %v", got, err)
	}
	if _, err := svc.Get(ctx, "missing"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("get a missing guardrail: %v", err)
	}

	clock.Advance(time.Minute)
	upd := secrets()
	upd.Builtin = true
	if _, err := svc.Update(ctx, member, g.ID, upd); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member updates a guardrail: %v", err)
	}
	got, err := svc.Update(ctx, admin, g.ID, upd)
	if err != nil || got.ID != g.ID || got.Name != "no-secrets" || got.Builtin || !got.CreatedAt.Equal(start) || !got.UpdatedAt.Equal(clock.Now()) {
		t.Fatalf("updated %+v, %v", got, err)
	}
	if _, err := svc.Update(ctx, admin, "missing", upd); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("update a missing guardrail: %v", err)
	}
	list, err := svc.List(ctx)
	if err != nil || len(list) != 1 || list[0].Pattern != upd.Pattern {
		t.Fatalf("list %+v, %v", list, err)
	}
	if err := svc.Delete(ctx, member, g.ID); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member deletes a guardrail: %v", err)
	}
	if err := svc.Delete(ctx, admin, g.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, admin, g.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

// TestABadGuardrailIsRefusedBeforeAnyRun holds that a guardrail that
// would not compile is a validation error on create and update, never
// stored for a run to fail on.
func TestABadGuardrailIsRefusedBeforeAnyRun(t *testing.T) {
	svc, _, _ := setup(t)
	ctx := context.Background()
	bad := secrets()
	bad.Pattern = "(unclosed"
	if _, err := svc.Create(ctx, admin, bad); !strings.Contains(errs.FieldsOf(err)["pattern"], "does not compile") {
		t.Fatalf("create with a bad pattern: %v", err)
	}
	g, _ := svc.Create(ctx, admin, secrets())
	if _, err := svc.Update(ctx, admin, g.ID, bad); errs.FieldsOf(err)["pattern"] == "" {
		t.Fatalf("update with a bad pattern: %v", err)
	}
	if got, _ := svc.Get(ctx, g.ID); got.Pattern != secrets().Pattern {
		t.Fatalf("a refused update was stored: %+v", got)
	}
	if list, _ := svc.List(ctx); len(list) != 1 {
		t.Fatalf("a refused create was stored: %+v", list)
	}
}

// TestAGuardrailAgentsNameCannotBeRenamedOrDeleted holds that a guardrail
// agents reference by name keeps its name and stays, while one no agent
// uses is free to change.
func TestAGuardrailAgentsNameCannotBeRenamedOrDeleted(t *testing.T) {
	svc, store, _ := setup(t)
	ctx := context.Background()
	g, _ := svc.Create(ctx, admin, secrets())
	agentUsing(t, store, "No-Secrets") // names match case-insensitively

	renamed := secrets()
	renamed.Name = "no-keys"
	if _, err := svc.Update(ctx, admin, g.ID, renamed); errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "cannot be renamed") {
		t.Fatalf("rename a referenced guardrail: %v", err)
	}
	same := secrets()
	same.Pattern, same.Description = `AKIA[0-9A-Z]{16}`, "AWS keys too"
	if got, err := svc.Update(ctx, admin, g.ID, same); err != nil || got.Pattern != same.Pattern {
		t.Fatalf("edit a referenced guardrail keeping its name: %+v, %v", got, err)
	}
	if err := svc.Delete(ctx, admin, g.ID); errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "1 agent(s)") {
		t.Fatalf("delete a referenced guardrail: %v", err)
	}
	if _, err := svc.Get(ctx, g.ID); err != nil {
		t.Fatalf("a refused delete removed it: %v", err)
	}

	free, _ := svc.Create(ctx, admin, domain.Guardrail{Name: "short", Stages: []domain.GuardrailStage{domain.StageInput},
		Mode: domain.ModeMaxLength, MaxChars: 100})
	if got, err := svc.Update(ctx, admin, free.ID, domain.Guardrail{Name: "shorter", Stages: []domain.GuardrailStage{domain.StageInput},
		Mode: domain.ModeMaxLength, MaxChars: 50}); err != nil || got.Name != "shorter" {
		t.Fatalf("rename an unused guardrail: %+v, %v", got, err)
	}
}

// TestChecksCompileTheNamedGuardrails holds that Checks returns a compiled
// check per name, in order and evaluating as defined, and that an
// unknown name fails the build rather than dropping a check.
func TestChecksCompileTheNamedGuardrails(t *testing.T) {
	svc, store, _ := setup(t)
	ctx := context.Background()
	svc.Create(ctx, admin, secrets())
	svc.Create(ctx, admin, domain.Guardrail{Name: "short", Stages: []domain.GuardrailStage{domain.StageInput}, Mode: domain.ModeMaxLength, MaxChars: 5})

	checks, err := svc.Checks(ctx, []string{"short", "NO-SECRETS"})
	if err != nil || len(checks) != 2 || checks[0].Guardrail().Name != "short" || checks[1].Guardrail().Name != "no-secrets" {
		t.Fatalf("checks %v, %v", checks, err)
	}
	if v := checks[1].Evaluate(domain.StageOutput, "the key is sk-abc123"); !v.Tripped || !strings.Contains(v.Reason, `"sk-abc123"`) {
		t.Fatalf("the compiled regex did not trip: %+v", v)
	}
	if v := checks[0].Evaluate(domain.StageInput, "123456"); !v.Tripped {
		t.Fatalf("the compiled length check did not trip: %+v", v)
	}
	if _, err := svc.Checks(ctx, []string{"short", "gone"}); errs.CodeOf(err) != errs.Validation || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("an unknown name: %v", err)
	}
	if checks, err := svc.Checks(ctx, nil); err != nil || len(checks) != 0 {
		t.Fatalf("no names: %v, %v", checks, err)
	}
	// A stored row that no longer compiles fails the build too.
	broken := domain.Guardrail{ID: "broken", Name: "broken", Stages: []domain.GuardrailStage{domain.StageInput}, Mode: "sentiment"}
	if err := store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertGuardrail(ctx, broken) }); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Checks(ctx, []string{"broken"}); errs.FieldsOf(err)["mode"] == "" {
		t.Fatalf("a stored guardrail that does not compile: %v", err)
	}
}

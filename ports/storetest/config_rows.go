package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The guardrail, memory and workflow rows of the configuration contract,
// and its transactions (see Config).

func guardrailID(g domain.Guardrail) string { return g.ID }

func configGuardrails(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	g := domain.Guardrail{ID: "g1", Name: "Strict", Description: "d", Stages: []domain.GuardrailStage{domain.StageInput, domain.StageToolOutput},
		Mode: domain.ModeRegex, Pattern: "secret", MaxChars: 10, Blocking: true, CreatedAt: configEpoch, UpdatedAt: configEpoch}
	mustWrite(t, s, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertGuardrail(ctx, g),
			tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g2", Name: "alpha", Mode: domain.ModeMaxLength, CreatedAt: configEpoch, UpdatedAt: configEpoch}),
			tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g3", Name: "zz-seeded", Builtin: true, Mode: domain.ModeMaxLength, CreatedAt: configEpoch,
				UpdatedAt: configEpoch}),
			tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g4", Name: "Beta", Mode: domain.ModeMaxLength, CreatedAt: configEpoch, UpdatedAt: configEpoch}))
	})
	want := g
	want.CreatedAt, want.UpdatedAt = kept(configEpoch), kept(configEpoch)
	if got, err := s.Config.FindGuardrail(ctx, g.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored guardrail:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	if got, err := s.Config.FindGuardrailByName(ctx, "STRICT"); err != nil || got.ID != g.ID {
		t.Fatalf("by name but for case = %s, %v", got.ID, err)
	}
	if _, err := s.Config.FindGuardrailByName(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing name: %v, want not_found", err)
	}
	// Built-ins first, then by name but for case (the store's own
	// built-ins among them).
	list, err := s.Config.ListGuardrails(ctx)
	mine := slices.DeleteFunc(idsOf(list, guardrailID), func(id string) bool { return !slices.Contains([]string{"g1", "g2", "g3", "g4"}, id) })
	if err != nil || !slices.Equal(mine, []string{"g3", "g2", "g4", "g1"}) {
		t.Fatalf("guardrails = %v, %v; want built-ins first, then alpha, Beta, Strict", mine, err)
	}
	for i := 1; i < len(list); i++ {
		if list[i].Builtin && !list[i-1].Builtin {
			t.Fatalf("a built-in after a guardrail of a person's: %v", idsOf(list, guardrailID))
		}
	}
	// One name space: a name taken but for case is a conflict, on insert or
	// rename.
	for what, fn := range map[string]func(tx ports.ConfigTx) error{
		"an insert": func(tx ports.ConfigTx) error {
			return tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g5", Name: "ALPHA", Mode: domain.ModeMaxLength, CreatedAt: configEpoch, UpdatedAt: configEpoch})
		},
		"a rename": func(tx ports.ConfigTx) error {
			return tx.UpdateGuardrail(ctx, domain.Guardrail{ID: "g4", Name: "strict", Mode: domain.ModeMaxLength, UpdatedAt: configEpoch})
		},
	} {
		if err := write(s, fn); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s onto a taken name: %v, want conflict", what, err)
		}
	}
	// An update keeps built-in and creation time.
	later := configEpoch.Add(time.Hour)
	up := domain.Guardrail{ID: "g3", Name: "zz-renamed", Description: "d2", Stages: []domain.GuardrailStage{domain.StageOutput}, Mode: domain.ModeRegex,
		Pattern: "p", Builtin: false, CreatedAt: later, UpdatedAt: later}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateGuardrail(ctx, up) })
	want = up
	want.Builtin, want.CreatedAt, want.UpdatedAt = true, kept(configEpoch), kept(later)
	if got, err := s.Config.FindGuardrail(ctx, "g3"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("updated guardrail:\n%+v, %v\nwant\n%+v", got, err, want)
	}
}

func memoryID(m domain.Memory) string { return m.ID }

func configMemories(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u := s.NewOwner(t, "u")
	for _, id := range []string{"a1", "a2"} {
		mustWrite(t, s, func(tx ports.ConfigTx) error {
			return tx.InsertAgent(ctx, domain.Agent{ID: id, Ownership: private(u), AgentSpec: domain.AgentSpec{Name: id, Model: "m"},
				CreatedAt: configEpoch, UpdatedAt: configEpoch})
		})
	}
	mem := func(id, agent, key string) domain.Memory {
		return domain.Memory{ID: id, AgentID: agent, Key: key, Content: "c-" + id, CreatedAt: configEpoch, UpdatedAt: configEpoch}
	}
	mustWrite(t, s, func(tx ports.ConfigTx) error {
		var err error
		for _, m := range []domain.Memory{mem("m1", "a2", "style"), mem("m2", "", "Style"), mem("m3", "a1", "repo"), mem("m4", "a1", "Style"),
			mem("m5", "", "apple")} {
			err = errors.Join(err, tx.InsertMemory(ctx, m))
		}
		return err
	})
	want := mem("m4", "a1", "Style")
	want.CreatedAt, want.UpdatedAt = kept(configEpoch), kept(configEpoch)
	if got, err := s.Config.FindMemory(ctx, "m4"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored memory:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	// Global ones first, then by agent, then by key but for case.
	if list, err := s.Config.ListMemories(ctx); err != nil || !slices.Equal(idsOf(list, memoryID), []string{"m5", "m2", "m3", "m4", "m1"}) {
		t.Fatalf("memories = %v, %v", idsOf(list, memoryID), err)
	}
	for scope, want := range map[string]int{"": 2, "a1": 2, "a2": 1, "a9": 0} {
		if n, err := s.Config.CountMemories(ctx, scope); err != nil || n != want {
			t.Fatalf("memories of %q = %d, %v; want %d", scope, n, err, want)
		}
	}
	for what, m := range map[string]domain.Memory{
		"a global key taken but for case":   mem("m6", "", "STYLE"),
		"an agent's key taken but for case": mem("m6", "a1", "REPO"),
		"a memory of no agent":              mem("m6", "a9", "fresh"),
	} {
		if err := write(s, func(tx ports.ConfigTx) error { return tx.InsertMemory(ctx, m) }); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", what, err)
		}
	}
	// An update keeps the scope and creation time, and is judged in it.
	later := configEpoch.Add(time.Hour)
	up := domain.Memory{ID: "m3", AgentID: "", Key: "repo2", Content: "c2", CreatedAt: later, UpdatedAt: later}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateMemory(ctx, up) })
	want = up
	want.AgentID, want.CreatedAt, want.UpdatedAt = "a1", kept(configEpoch), kept(later)
	if got, err := s.Config.FindMemory(ctx, "m3"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("updated memory:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	up.Key = "style"
	if err := write(s, func(tx ports.ConfigTx) error { return tx.UpdateMemory(ctx, up) }); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a rename onto its scope's taken key: %v, want conflict", err)
	}
	// Deleting an agent takes its memories along, and no others.
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, "a1") })
	if list, err := s.Config.ListMemories(ctx); err != nil || !slices.Equal(idsOf(list, memoryID), []string{"m5", "m2", "m1"}) {
		t.Fatalf("memories after their agent went = %v, %v", idsOf(list, memoryID), err)
	}
}

func workflowID(w domain.Workflow) string { return w.ID }

func configWorkflows(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u := s.NewOwner(t, "u")
	steps := []domain.WorkflowStep{
		{ID: "s1", Name: "draft", Agent: "a1", Prompt: "draft it", PauseBefore: true, OnSuccess: "s2"},
		{ID: "s2", Name: "check", Agent: "a2", Prompt: "check it", Gate: true, GatePass: "OK", GateFail: "NO", CompactBefore: true, OnFailure: "end"},
	}
	w := domain.Workflow{ID: "w1", Ownership: private(u), CreatedAt: configEpoch, UpdatedAt: configEpoch, WorkflowSpec: domain.WorkflowSpec{
		Name: "review", Description: "d", Steps: steps, Budget: domain.WorkflowBudget{MaxSteps: 5, MaxTokens: 1000, MaxMinutes: 3, MaxLaps: 2}}}
	mustWrite(t, s, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertWorkflow(ctx, w), tx.InsertWorkflow(ctx, domain.Workflow{ID: "w2", Ownership: global(u),
			WorkflowSpec: domain.WorkflowSpec{Name: "other", Steps: []domain.WorkflowStep{{ID: "x", Agent: "a1"}}}, CreatedAt: configEpoch,
			UpdatedAt: configEpoch}))
	})
	want := w
	want.Steps, want.CreatedAt, want.UpdatedAt = slices.Clone(steps), kept(configEpoch), kept(configEpoch)
	got, err := s.Config.FindWorkflow(ctx, w.ID)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stored workflow:\n%+v, %v\nwant\n%+v", got, err, want)
	}
	got.Steps[0].Prompt = "changed"
	if again, _ := s.Config.FindWorkflow(ctx, w.ID); again.Steps[0].Prompt != "draft it" {
		t.Fatal("a stored workflow changed with a returned one")
	}
	if list, err := s.Config.ListWorkflows(ctx); err != nil || !slices.Equal(idsOf(list, workflowID), []string{"w2", "w1"}) {
		t.Fatalf("workflows = %v, %v; want newest first", idsOf(list, workflowID), err)
	}
	for agent, wantIDs := range map[string][]string{"a1": {"w1", "w2"}, "a2": {"w1"}, "a9": {}} {
		list, err := s.Config.WorkflowsUsingAgent(ctx, agent)
		ids := idsOf(list, workflowID)
		slices.Sort(ids)
		if err != nil || !slices.Equal(ids, wantIDs) {
			t.Fatalf("workflows running %s = %v, %v; want %v", agent, ids, err, wantIDs)
		}
	}
	later := configEpoch.Add(time.Hour)
	up := w
	up.Ownership, up.Description, up.Steps, up.Budget, up.CreatedAt, up.UpdatedAt = global("someone-else"), "d2", steps[:1], domain.WorkflowBudget{}, later, later
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.UpdateWorkflow(ctx, up) })
	want = up
	want.OwnerID, want.Steps, want.CreatedAt, want.UpdatedAt = u, slices.Clone(steps[:1]), kept(configEpoch), kept(later)
	if got, err := s.Config.FindWorkflow(ctx, w.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("updated workflow:\n%+v, %v\nwant\n%+v", got, err, want)
	}
}

func configTx(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u := s.NewOwner(t, "u")
	agent := domain.Agent{ID: "a1", Ownership: private(u), AgentSpec: domain.AgentSpec{Name: "Helper", Model: "m"}, CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	boom := errors.New("boom")
	err := write(s, func(tx ports.ConfigTx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		// The transaction reads its own writes; the store outside does not
		// see them yet.
		if _, err := tx.FindAgent(ctx, "a1"); err != nil {
			t.Errorf("the transaction's own agent: %v", err)
		}
		if list, err := tx.ListAgents(ctx); err != nil || len(list) != 1 {
			t.Errorf("the transaction's own list = %d, %v", len(list), err)
		}
		if err := tx.InsertMemory(ctx, domain.Memory{ID: "m1", AgentID: "a1", Key: "k", CreatedAt: configEpoch, UpdatedAt: configEpoch}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("the failing transaction: %v", err)
	}
	if _, err := s.Config.FindAgent(ctx, "a1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled-back insert is visible: %v", err)
	}
	if n, _ := s.Config.CountMemories(ctx, "a1"); n != 0 {
		t.Fatalf("a rolled-back memory is visible: %d", n)
	}
	// A failing write ends the transaction with its earlier writes undone.
	err = write(s, func(tx ports.ConfigTx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		return tx.InsertMemory(ctx, domain.Memory{ID: "m1", AgentID: "nope", Key: "k", CreatedAt: configEpoch, UpdatedAt: configEpoch})
	})
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a memory of no agent: %v, want conflict", err)
	}
	if _, err := s.Config.FindAgent(ctx, "a1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an insert before a refused write is visible: %v", err)
	}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, agent) })
	if _, err := s.Config.FindAgent(ctx, "a1"); err != nil {
		t.Fatalf("a committed insert: %v", err)
	}
	// A rolled-back delete keeps the row.
	if err := write(s, func(tx ports.ConfigTx) error { _ = tx.DeleteAgent(ctx, "a1"); return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := s.Config.FindAgent(ctx, "a1"); err != nil {
		t.Fatalf("a rolled-back delete took effect: %v", err)
	}
}

func configMissing(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	for what, fn := range map[string]func(tx ports.ConfigTx) error{
		"update provider": func(tx ports.ConfigTx) error { return tx.UpdateProvider(ctx, domain.Provider{ID: "nope"}) },
		"delete provider": func(tx ports.ConfigTx) error { return tx.DeleteProvider(ctx, "nope") },
		"update agent":    func(tx ports.ConfigTx) error { return tx.UpdateAgent(ctx, domain.Agent{ID: "nope"}) },
		"delete agent":    func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, "nope") },
		"update guardrail": func(tx ports.ConfigTx) error {
			return tx.UpdateGuardrail(ctx, domain.Guardrail{ID: "nope", Name: "nope"})
		},
		"delete guardrail": func(tx ports.ConfigTx) error { return tx.DeleteGuardrail(ctx, "nope") },
		"update memory":    func(tx ports.ConfigTx) error { return tx.UpdateMemory(ctx, domain.Memory{ID: "nope", Key: "k"}) },
		"delete memory":    func(tx ports.ConfigTx) error { return tx.DeleteMemory(ctx, "nope") },
		"update workflow":  func(tx ports.ConfigTx) error { return tx.UpdateWorkflow(ctx, domain.Workflow{ID: "nope"}) },
		"delete workflow":  func(tx ports.ConfigTx) error { return tx.DeleteWorkflow(ctx, "nope") },
		"update skill":     func(tx ports.ConfigTx) error { return tx.UpdateSkill(ctx, domain.Skill{ID: "nope"}) },
		"delete skill":     func(tx ports.ConfigTx) error { return tx.DeleteSkill(ctx, "nope") },
	} {
		if err := write(s, fn); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("%s of a missing row: %v, want not_found", what, err)
		}
	}
	for what, err := range map[string]error{
		"provider":  func() error { _, err := s.Config.FindProvider(ctx, "nope"); return err }(),
		"agent":     func() error { _, err := s.Config.FindAgent(ctx, "nope"); return err }(),
		"guardrail": func() error { _, err := s.Config.FindGuardrail(ctx, "nope"); return err }(),
		"memory":    func() error { _, err := s.Config.FindMemory(ctx, "nope"); return err }(),
		"workflow":  func() error { _, err := s.Config.FindWorkflow(ctx, "nope"); return err }(),
		"skill":     func() error { _, err := s.Config.FindSkill(ctx, "nope"); return err }(),
	} {
		if errs.CodeOf(err) != errs.NotFound {
			t.Errorf("a missing %s: %v, want not_found", what, err)
		}
	}
}

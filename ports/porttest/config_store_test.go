package porttest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestConfigStoreTransactions(t *testing.T) {
	ctx := context.Background()
	s := &porttest.ConfigStore{}
	own := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u"}
	agent := domain.Agent{ID: "a1", Ownership: own, AgentSpec: domain.AgentSpec{Name: "Helper", Tools: []string{"x"}}}
	boom := errors.New("boom")
	err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := s.FindAgent(ctx, "a1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled back insert is visible: %v", err)
	}
	err = s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertAgent(ctx, agent),
			tx.InsertMemory(ctx, domain.Memory{ID: "m1", AgentID: "a1", Key: "k"}),
			tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g1", Name: "Strict"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func(tx ports.ConfigTx) error
		code errs.Code
	}{
		{"an agent name taken in one owner's privates, but for case", func(tx ports.ConfigTx) error {
			return tx.InsertAgent(ctx, domain.Agent{ID: "a2", Ownership: own, AgentSpec: domain.AgentSpec{Name: "helper"}})
		}, errs.Conflict},
		{"a guardrail name taken", func(tx ports.ConfigTx) error {
			return tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g2", Name: "STRICT"})
		}, errs.Conflict},
		{"a memory key taken in its scope", func(tx ports.ConfigTx) error {
			return tx.InsertMemory(ctx, domain.Memory{ID: "m2", AgentID: "a1", Key: "K"})
		}, errs.Conflict},
		{"a memory of no agent", func(tx ports.ConfigTx) error {
			return tx.InsertMemory(ctx, domain.Memory{ID: "m3", AgentID: "nope", Key: "k"})
		}, errs.Conflict},
		{"an update of nothing", func(tx ports.ConfigTx) error {
			return tx.UpdateProvider(ctx, domain.Provider{ID: "nope"})
		}, errs.NotFound},
	} {
		if err := s.InConfigTx(ctx, c.fn); errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	// Another owner may use the name; a returned agent is a copy.
	if err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		return tx.InsertAgent(ctx, domain.Agent{ID: "a3", Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "v"},
			AgentSpec: domain.AgentSpec{Name: "Helper"}})
	}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.FindAgent(ctx, "a1")
	a.Tools[0] = "changed"
	if again, _ := s.FindAgent(ctx, "a1"); again.Tools[0] != "x" {
		t.Fatal("a caller changed a stored agent")
	}
	if g, err := s.FindGuardrailByName(ctx, "strict"); err != nil || g.ID != "g1" {
		t.Fatalf("by name: %+v, %v", g, err)
	}
	// Deleting an agent takes its memories along.
	if err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, "a1") }); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountMemories(ctx, "a1"); n != 0 {
		t.Fatalf("%d memories outlived their agent", n)
	}
}

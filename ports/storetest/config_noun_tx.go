package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// nounTx is one noun's transaction as the contract drives it: insert a row
// of that noun, then fail or not; found says whether the row is stored.
type nounTx struct {
	noun   string
	insert func(ctx context.Context, s ports.ConfigStore, fail error) error
	found  func(ctx context.Context, s ports.ConfigStore) error
}

// configNounTxs holds each noun's narrower transaction to what InConfigTx
// keeps: it reads the agents its rules ask about, commits whole when fn
// returns nil, and rolls back when fn fails.
func configNounTxs(t *testing.T, s ConfigStores) {
	ctx := context.Background()
	u := s.NewOwner(t, "u")
	agent := domain.Agent{ID: "a1", Ownership: private(u), AgentSpec: domain.AgentSpec{Name: "Helper", Model: "m"}, CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	mustWrite(t, s, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, agent) })
	seesAgent := func(tx ports.AgentReader) error {
		if _, err := tx.FindAgent(ctx, agent.ID); err != nil {
			return errors.New("the transaction does not see the committed agent: " + err.Error())
		}
		return nil
	}
	skill := domain.Skill{ID: "k1", Ownership: private(u), Name: "notes", Content: "---\nname: notes\n---\n", CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	workflow := domain.Workflow{ID: "w1", Ownership: private(u), WorkflowSpec: domain.WorkflowSpec{Name: "flow", Steps: []domain.WorkflowStep{}},
		CreatedAt: configEpoch, UpdatedAt: configEpoch}
	memory := domain.Memory{ID: "m1", AgentID: agent.ID, Key: "k", Content: "c", CreatedAt: configEpoch, UpdatedAt: configEpoch}
	guardrail := domain.Guardrail{ID: "g1", Name: "no-secrets", Mode: domain.ModeMaxLength, CreatedAt: configEpoch, UpdatedAt: configEpoch}
	provider := domain.Provider{ID: "p1", Ownership: private(u), Name: "OpenAI", Type: "openai", CreatedAt: configEpoch, UpdatedAt: configEpoch}
	second := domain.Agent{ID: "a2", Ownership: private(u), AgentSpec: domain.AgentSpec{Name: "Second", Model: "m"}, CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	nouns := []nounTx{
		{"provider", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InProviderTx(ctx, func(tx ports.ProviderTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertProvider(ctx, provider); err != nil {
					return err
				}
				if _, err := tx.FindProvider(ctx, provider.ID); err != nil {
					return err
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error {
			_, err := s.FindProvider(ctx, provider.ID)
			return err
		}},
		{"agent", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InAgentTx(ctx, func(tx ports.AgentTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertAgent(ctx, second); err != nil {
					return err
				}
				if _, err := tx.FindAgent(ctx, second.ID); err != nil {
					return err
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error {
			_, err := s.FindAgent(ctx, second.ID)
			return err
		}},
		{"skill", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InSkillTx(ctx, func(tx ports.SkillTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertSkill(ctx, skill); err != nil {
					return err
				}
				if _, err := tx.FindSkill(ctx, skill.ID); err != nil {
					return err
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error { _, err := s.FindSkill(ctx, skill.ID); return err }},
		{"workflow", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InWorkflowTx(ctx, func(tx ports.WorkflowTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertWorkflow(ctx, workflow); err != nil {
					return err
				}
				if _, err := tx.FindWorkflow(ctx, workflow.ID); err != nil {
					return err
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error {
			_, err := s.FindWorkflow(ctx, workflow.ID)
			return err
		}},
		{"memory", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InMemoryTx(ctx, func(tx ports.MemoryTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertMemory(ctx, memory); err != nil {
					return err
				}
				if n, err := tx.CountMemories(ctx, agent.ID); err != nil || n != 1 {
					return errors.New("the transaction does not count its own memory")
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error {
			_, err := s.FindMemory(ctx, memory.ID)
			return err
		}},
		{"guardrail", func(ctx context.Context, s ports.ConfigStore, fail error) error {
			return s.InGuardrailTx(ctx, func(tx ports.GuardrailTx) error {
				if err := seesAgent(tx); err != nil {
					return err
				}
				if err := tx.InsertGuardrail(ctx, guardrail); err != nil {
					return err
				}
				if _, err := tx.FindGuardrailByName(ctx, guardrail.Name); err != nil {
					return err
				}
				return fail
			})
		}, func(ctx context.Context, s ports.ConfigStore) error {
			_, err := s.FindGuardrail(ctx, guardrail.ID)
			return err
		}},
	}
	boom := errors.New("boom")
	for _, n := range nouns {
		if err := n.insert(ctx, s.Config, boom); !errors.Is(err, boom) {
			t.Fatalf("%s: the failing transaction: %v, want its own error", n.noun, err)
		}
		if err := n.found(ctx, s.Config); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("%s: a rolled-back insert is visible: %v", n.noun, err)
		}
		if err := n.insert(ctx, s.Config, nil); err != nil {
			t.Fatalf("%s: the transaction: %v", n.noun, err)
		}
		if err := n.found(ctx, s.Config); err != nil {
			t.Fatalf("%s: a committed insert: %v", n.noun, err)
		}
	}
}

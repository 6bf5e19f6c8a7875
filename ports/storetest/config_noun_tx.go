package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// nounTx is one noun's transaction as the contract drives it: run writes
// a row of the noun and then fails with fail (nil: commits); found reads
// that row back through the store.
type nounTx struct {
	noun  string
	run   func(fail error) error
	found func() error
}

// inNounTx runs write inside one noun's transaction (in), after checking
// the transaction sees the agents its rules ask about, and then fails with
// fail.
func inNounTx[Tx ports.AgentReader](ctx context.Context, in func(context.Context, func(Tx) error) error, agentID string,
	write func(Tx) error) func(fail error) error {
	return func(fail error) error {
		return in(ctx, func(tx Tx) error {
			if _, err := tx.FindAgent(ctx, agentID); err != nil {
				return errors.New("the transaction does not see the committed agent: " + err.Error())
			}
			if err := write(tx); err != nil {
				return err
			}
			return fail
		})
	}
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
	provider := domain.Provider{ID: "p1", Ownership: private(u), Name: "OpenAI", Type: "openai", CreatedAt: configEpoch, UpdatedAt: configEpoch}
	second := domain.Agent{ID: "a2", Ownership: private(u), AgentSpec: domain.AgentSpec{Name: "Second", Model: "m"}, CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	skill := domain.Skill{ID: "k1", Ownership: private(u), Name: "notes", Content: "---\nname: notes\n---\n", CreatedAt: configEpoch,
		UpdatedAt: configEpoch}
	workflow := domain.Workflow{ID: "w1", Ownership: private(u), WorkflowSpec: domain.WorkflowSpec{Name: "flow", Steps: []domain.WorkflowStep{}},
		CreatedAt: configEpoch, UpdatedAt: configEpoch}
	memory := domain.Memory{ID: "m1", AgentID: agent.ID, Key: "k", Content: "c", CreatedAt: configEpoch, UpdatedAt: configEpoch}
	guardrail := domain.Guardrail{ID: "g1", Name: "no-secrets", Mode: domain.ModeMaxLength, CreatedAt: configEpoch, UpdatedAt: configEpoch}
	c := s.Config
	nouns := []nounTx{
		{"provider", inNounTx(ctx, c.InProviderTx, agent.ID, func(tx ports.ProviderTx) error { return tx.InsertProvider(ctx, provider) }),
			func() error { _, err := c.FindProvider(ctx, provider.ID); return err }},
		{"agent", inNounTx(ctx, c.InAgentTx, agent.ID, func(tx ports.AgentTx) error { return tx.InsertAgent(ctx, second) }),
			func() error { _, err := c.FindAgent(ctx, second.ID); return err }},
		{"skill", inNounTx(ctx, c.InSkillTx, agent.ID, func(tx ports.SkillTx) error { return tx.InsertSkill(ctx, skill) }),
			func() error { _, err := c.FindSkill(ctx, skill.ID); return err }},
		{"workflow", inNounTx(ctx, c.InWorkflowTx, agent.ID, func(tx ports.WorkflowTx) error { return tx.InsertWorkflow(ctx, workflow) }),
			func() error { _, err := c.FindWorkflow(ctx, workflow.ID); return err }},
		{"memory", inNounTx(ctx, c.InMemoryTx, agent.ID, func(tx ports.MemoryTx) error { return tx.InsertMemory(ctx, memory) }),
			func() error { _, err := c.FindMemory(ctx, memory.ID); return err }},
		{"guardrail", inNounTx(ctx, c.InGuardrailTx, agent.ID, func(tx ports.GuardrailTx) error { return tx.InsertGuardrail(ctx, guardrail) }),
			func() error { _, err := c.FindGuardrail(ctx, guardrail.ID); return err }},
	}
	boom := errors.New("boom")
	for _, n := range nouns {
		if err := n.run(boom); !errors.Is(err, boom) {
			t.Fatalf("%s: the failing transaction: %v, want its own error", n.noun, err)
		}
		if err := n.found(); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("%s: a rolled-back insert is visible: %v", n.noun, err)
		}
		if err := n.run(nil); err != nil {
			t.Fatalf("%s: the transaction: %v", n.noun, err)
		}
		if err := n.found(); err != nil {
			t.Fatalf("%s: a committed insert: %v", n.noun, err)
		}
	}
}

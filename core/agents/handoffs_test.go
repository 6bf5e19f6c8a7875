package agents

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// agentsByID is a store's FindAgent over a fixed set.
type agentsByID map[string]domain.Agent

func (m agentsByID) FindAgent(_ context.Context, id string) (domain.Agent, error) {
	a, ok := m[id]
	if !ok {
		return a, errs.E(errs.NotFound, "agent not found")
	}
	return a, nil
}

func TestHandoffsOfferOnlyTheTargetsStillThereAndReachable(t *testing.T) {
	mine := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u1"}
	billing := domain.Agent{ID: "b", Ownership: domain.Ownership{Scope: domain.ScopeGlobal}, AgentSpec: domain.AgentSpec{Name: "Billing"}}
	helper := domain.Agent{ID: "h", Ownership: mine, AgentSpec: domain.AgentSpec{Name: "Helper"}}
	theirs := domain.Agent{ID: "x", Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u2"}, AgentSpec: domain.AgentSpec{Name: "Theirs"}}
	a := domain.Agent{ID: "a", Ownership: mine, AgentSpec: domain.AgentSpec{Name: "Front", Handoffs: []string{"h", "gone", "x", "b"}}}
	specs, targets, err := Handoffs(context.Background(), agentsByID{"b": billing, "h": helper, "x": theirs}, a)
	if err != nil || len(specs) != 2 || len(targets) != 2 {
		t.Fatalf("Handoffs = %+v, %v, %v; want Helper then Billing", specs, targets, err)
	}
	if specs[0].Name != domain.HandoffToolName("Helper") || specs[1].Name != domain.HandoffToolName("Billing") ||
		targets[specs[1].Name].ID != "b" {
		t.Fatalf("the transfer tools are %s, %s (targets %v)", specs[0].Name, specs[1].Name, targets)
	}
}

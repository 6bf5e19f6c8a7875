package agents

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
)

// Finder finds an agent by id; not_found when absent.
type Finder interface {
	FindAgent(ctx context.Context, id string) (domain.Agent, error)
}

// Handoffs are the transfer tools an agent offers on a run, in its
// order, and their targets by tool name. A target since deleted, or no
// longer the agent's to reference, is simply not offered: the references
// were validated when the agent was saved.
func Handoffs(ctx context.Context, find Finder, a domain.Agent) ([]tools.Spec, map[string]domain.Agent, error) {
	var specs []tools.Spec
	targets := map[string]domain.Agent{}
	for _, id := range a.Handoffs {
		t, err := find.FindAgent(ctx, id)
		if errs.Is(err, errs.NotFound) || (err == nil && !a.MayReference(t.Ownership)) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		spec := tools.Handoff(domain.HandoffToolName(t.Name), t.Name, t.Behavior.HandoffDescription)
		targets[spec.Name] = t
		specs = append(specs, spec)
	}
	return specs, targets, nil
}

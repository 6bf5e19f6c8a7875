package porttest

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// SeedAgent stores agent id, a private one of ownerID's, for a core test:
// spec with a name, model "m" and providerID unless it says otherwise
// (provider "none": no provider). It returns the stored row.
func (s *ConfigStore) SeedAgent(ctx context.Context, id, ownerID, providerID string, spec domain.AgentSpec, now time.Time) (domain.Agent, error) {
	if spec.Name == "" {
		spec.Name = "agent-" + id[len(id)-4:]
	}
	if spec.Model == "" {
		spec.Model = "m"
	}
	switch spec.ProviderID {
	case "":
		spec.ProviderID = providerID
	case "none":
		spec.ProviderID = ""
	}
	a := domain.Agent{ID: id, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: ownerID}, AgentSpec: spec,
		CreatedAt: now, UpdatedAt: now}
	return a, s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, a) })
}

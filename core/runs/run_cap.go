package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/runcap"
)

// CheckRunCap refuses (rate_limited) work that would start a run for
// ownerID while they have max_runs_per_user live runs: for callers that
// set up more than a run before starting it (a workflow start, a task's
// retry, a cleared step), so a refusal leaves nothing half-made.
func (s *Service) CheckRunCap(ctx context.Context, ownerID string) error {
	_, err := runcap.Admit(ctx, s.d.Settings, s.d.Runs, ownerID)
	return err
}

package runs

import (
	"context"
	"strconv"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// charged returns ctx charging its model calls to the run's owner, as a
// call of kind (a turn is a task's when the run is a task's attempt). A
// turn's budget notices go to the run's watchers, once per budget.
func (s *Service) charged(ctx context.Context, rc *runCtx, kind domain.UsageKind) context.Context {
	lr := rc.lr
	c := ports.UsageCall{Kind: kind, UserID: lr.run.OwnerID, AgentID: lr.run.AgentConfigID, SessionID: lr.run.SessionID, RunID: lr.run.ID}
	if rc.agent != nil {
		c.AgentID = rc.agent.Agent.ID
	}
	if lr.task != nil {
		c.TaskID = lr.task.TaskID
		if kind == domain.UsageChat {
			c.Kind = domain.UsageTask
		}
	}
	if kind == domain.UsageChat {
		c.Near = func(n ports.BudgetNotice) {
			if rc.noted["budget:"+n.BudgetID] {
				return
			}
			rc.noted["budget:"+n.BudgetID] = true
			s.diagnostic(rc, "budget_near", "", n.Message, map[string]string{"budget_id": n.BudgetID,
				"percent": strconv.Itoa(n.Percent), "resets_at": n.ResetsAt.Format(time.RFC3339)})
		}
	}
	return ports.WithUsageCall(ctx, c)
}

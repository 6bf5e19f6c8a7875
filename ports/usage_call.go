package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// UsageCall says whom a model call is charged to and what it is for. The
// code that makes a call (a run's turn, a title, a compaction, the
// playground) sets it in the call's context; the usage meter in front of
// the model port reads it to check the budgets before the call and to
// record the call after it.
type UsageCall struct {
	Kind      domain.UsageKind
	UserID    string // the person charged: the run's, task's or trigger's owner
	AgentID   string
	SessionID string
	RunID     string
	TaskID    string
	// Near is told, before a call, of each budget that applies and has
	// passed 80% of its limit (nil: nobody listens).
	Near func(BudgetNotice)
}

// BudgetNotice is a budget nearing its limit.
type BudgetNotice struct {
	BudgetID string
	// Message says which budget, how much of it is used and when it
	// resets, in a person's terms.
	Message  string
	Percent  int
	ResetsAt time.Time
}

type usageCallKey struct{}

// WithUsageCall returns ctx carrying c for the model calls made in it.
func WithUsageCall(ctx context.Context, c UsageCall) context.Context {
	return context.WithValue(ctx, usageCallKey{}, c)
}

// UsageCallOf returns the UsageCall ctx carries (ok false: none).
func UsageCallOf(ctx context.Context) (UsageCall, bool) {
	c, ok := ctx.Value(usageCallKey{}).(UsageCall)
	return c, ok
}

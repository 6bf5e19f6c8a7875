package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// UsageStore keeps usage records, their daily rollups, the price table and
// the budgets. Reports read the rollups, never the records, so a report
// over a year of a team's calls costs the days and groups it spans.
type UsageStore interface {
	// RecordUsage inserts rec and adds it to its day's rollups (by day,
	// person, agent, provider and model; by day and conversation) in one
	// transaction.
	RecordUsage(ctx context.Context, rec domain.UsageRecord) error
	// UsageReport sums the rollups q selects, grouped as q says, the
	// groups by cost then tokens, largest first (by day: oldest first).
	UsageReport(ctx context.Context, q UsageQuery) (UsageReport, error)
	// UsageTotals sums the rollups of the days from fromDay to toDay
	// (inclusive, YYYY-MM-DD) that match f: a budget's consumption.
	UsageTotals(ctx context.Context, f UsageFilter, fromDay, toDay string) (domain.UsageTotals, error)
	// RunUsage sums the records of one run.
	RunUsage(ctx context.Context, runID string) (domain.UsageTotals, error)
	// SessionUsage sums the records of one conversation.
	SessionUsage(ctx context.Context, sessionID string) (domain.UsageTotals, error)
	// SessionRunsUsage sums the records of one conversation run by run,
	// keyed by run id (a call of no run, a playground replay or a
	// Compact now, under "").
	SessionRunsUsage(ctx context.Context, sessionID string) (map[string]domain.UsageTotals, error)
	// ListUsage returns records in time order (then id) from q.FromDay to
	// q.ToDay that match q.Filter, after q.AfterID when set, at most
	// q.Limit: the CSV export's pages.
	ListUsage(ctx context.Context, q UsageListQuery) ([]domain.UsageRecord, error)

	// ListPrices returns the price table, by provider type then model.
	ListPrices(ctx context.Context) ([]domain.Price, error)
	// FindPrice returns the price of a model; not_found when it has none.
	FindPrice(ctx context.Context, providerType, model string) (domain.Price, error)
	// PutPrice inserts p, or replaces the price of its provider type and
	// model (keeping that row's id).
	PutPrice(ctx context.Context, p domain.Price) (domain.Price, error)
	// DeletePrice removes a price by id; not_found when absent.
	DeletePrice(ctx context.Context, id string) error
	// SeedPrices inserts the prices of models the table has no row for
	// and says how many: a seed never overwrites an admin's figure.
	SeedPrices(ctx context.Context, prices []domain.Price) (int, error)

	// ListBudgets returns every budget, oldest first.
	ListBudgets(ctx context.Context) ([]domain.Budget, error)
	// GetBudget returns a budget; not_found when absent.
	GetBudget(ctx context.Context, id string) (domain.Budget, error)
	// CreateBudget inserts b; conflict when a budget of the same scope,
	// subject, period and unit exists.
	CreateBudget(ctx context.Context, b domain.Budget) error
	// UpdateBudget replaces b's limit (and UpdatedAt); not_found when absent.
	UpdateBudget(ctx context.Context, b domain.Budget) error
	// DeleteBudget removes a budget; not_found when absent.
	DeleteBudget(ctx context.Context, id string) error
}

// UsageFilter narrows usage to one person, agent or provider (each ""
// for any).
type UsageFilter struct {
	UserID     string
	AgentID    string
	ProviderID string
}

// UsageGroup is what a report groups by.
type UsageGroup string

// The report groupings.
const (
	GroupPerson       UsageGroup = "person"
	GroupAgent        UsageGroup = "agent"
	GroupProvider     UsageGroup = "provider"
	GroupModel        UsageGroup = "model"
	GroupDay          UsageGroup = "day"
	GroupConversation UsageGroup = "conversation"
)

// UsageGroups lists every grouping.
var UsageGroups = []UsageGroup{GroupPerson, GroupAgent, GroupProvider, GroupModel, GroupDay, GroupConversation}

// UsageQuery selects a report: the days from FromDay to ToDay (inclusive,
// YYYY-MM-DD), the calls Filter matches (a conversation report filters by
// person alone), grouped by GroupBy, at most Limit groups (0: all).
type UsageQuery struct {
	FromDay, ToDay string
	Filter         UsageFilter
	GroupBy        UsageGroup
	Limit          int
}

// UsageReport is a report: its groups and the totals of everything the
// query selected (not only the groups a limit kept).
type UsageReport struct {
	Rows   []UsageRow
	Totals domain.UsageTotals
}

// UsageRow is one group of a report. Key is the person's, agent's,
// provider's or conversation's id, the model's name ("provider_type/model"
// for a model), or the day (YYYY-MM-DD); Label its name where the store
// knows one ("" for one deleted since).
type UsageRow struct {
	Key   string
	Label string
	domain.UsageTotals
}

// UsageListQuery pages records for an export.
type UsageListQuery struct {
	FromDay, ToDay string
	Filter         UsageFilter
	AfterID        string
	Limit          int
}

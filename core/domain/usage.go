package domain

import "time"

// UsageKind says what a model call was for.
type UsageKind string

// The usage kinds.
const (
	// UsageChat is a turn of a run on a person's own conversation: a chat
	// message, a regenerate, an /mcp ask.
	UsageChat UsageKind = "chat"
	// UsageTask is a turn of a background task's run: a task, a workflow
	// step, a trigger's work, a wake-up reading task results.
	UsageTask UsageKind = "task"
	// UsageTitle names a conversation.
	UsageTitle UsageKind = "title"
	// UsageCompaction folds a conversation into a summary.
	UsageCompaction UsageKind = "compaction"
	// UsagePlayground is a call from an agent's playground.
	UsagePlayground UsageKind = "playground"
)

// UsageKinds lists every kind, in the order reports show them.
var UsageKinds = []UsageKind{UsageChat, UsageTask, UsageTitle, UsageCompaction, UsagePlayground}

// The outcomes of a recorded call.
const (
	UsageOK        = "ok"        // the call answered
	UsageFailed    = "error"     // the provider refused or failed
	UsageCancelled = "cancelled" // the caller gave up on it
)

// UsageRecord is one model call as usage: who it is charged to, what it
// ran on and what it cost. Its cost is computed from the price table when
// it is recorded, so a later price change does not rewrite history.
type UsageRecord struct {
	ID           string
	At           time.Time
	UserID       string // the person charged: the run's, task's or trigger's owner
	AgentID      string // "" for a call made for no agent
	ProviderID   string
	ProviderType string
	Model        string
	SessionID    string // "" outside a conversation (playground)
	RunID        string
	TaskID       string // the task (or workflow step's task) the run is an attempt of
	Kind         UsageKind
	Outcome      string // UsageOK, UsageFailed, UsageCancelled
	// The provider's counts: CachedInputTokens are part of InputTokens,
	// ReasoningTokens part of OutputTokens.
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	ReasoningTokens   int64
	// CostMicros is the cost in millionths of a US dollar; meaningful only
	// when Priced (a model with no price counts tokens alone).
	CostMicros int64
	Priced     bool
}

// Tokens is what budgets in tokens count: input plus output.
func (r UsageRecord) Tokens() int64 { return r.InputTokens + r.OutputTokens }

// UsageTotals sums usage records.
type UsageTotals struct {
	Calls             int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	ReasoningTokens   int64
	CostMicros        int64
	// UnpricedCalls counts the calls on a model with no price: their
	// tokens are in the sums, their cost is not.
	UnpricedCalls int64
}

// Tokens is input plus output.
func (t UsageTotals) Tokens() int64 { return t.InputTokens + t.OutputTokens }

// Add sums a record in.
func (t *UsageTotals) Add(r UsageRecord) {
	t.Calls++
	t.InputTokens += r.InputTokens
	t.CachedInputTokens += r.CachedInputTokens
	t.OutputTokens += r.OutputTokens
	t.ReasoningTokens += r.ReasoningTokens
	if r.Priced {
		t.CostMicros += r.CostMicros
	} else {
		t.UnpricedCalls++
	}
}

// Plus sums two totals.
func (t UsageTotals) Plus(b UsageTotals) UsageTotals {
	t.Calls += b.Calls
	t.InputTokens += b.InputTokens
	t.CachedInputTokens += b.CachedInputTokens
	t.OutputTokens += b.OutputTokens
	t.ReasoningTokens += b.ReasoningTokens
	t.CostMicros += b.CostMicros
	t.UnpricedCalls += b.UnpricedCalls
	return t
}

// Price is what a model costs per million tokens, in millionths of a US
// dollar (2500000 = $2.50), with where the figure came from.
type Price struct {
	ID           string
	ProviderType string // openai, anthropic, or a program's own type
	Model        string
	InputMicros  int64 // per million input tokens not read from the cache
	// CachedInputMicros prices cached input tokens; 0 with no discount
	// known: they cost as input.
	CachedInputMicros int64
	OutputMicros      int64
	Source            string // where the figure came from (a URL)
	AsOf              string // the day the figure was read, YYYY-MM-DD
	UpdatedAt         time.Time
}

// Cost is what a record's tokens cost at this price, in micro-dollars,
// rounded to the nearest.
func (p Price) Cost(r UsageRecord) int64 {
	cached := min(r.CachedInputTokens, r.InputTokens)
	cachedRate := p.CachedInputMicros
	if cachedRate == 0 {
		cachedRate = p.InputMicros
	}
	sum := (r.InputTokens-cached)*p.InputMicros + cached*cachedRate + r.OutputTokens*p.OutputMicros
	return (sum + 500_000) / 1_000_000
}

// BudgetScope says whose calls a budget counts.
type BudgetScope string

// The budget scopes.
const (
	BudgetPerson   BudgetScope = "person"   // one person's calls
	BudgetDefault  BudgetScope = "default"  // each member's own calls, unless a person budget of theirs covers the period
	BudgetAgent    BudgetScope = "agent"    // every call of one agent, whoever made it
	BudgetProvider BudgetScope = "provider" // every call on one provider
)

// BudgetPeriod is the window a budget counts over, in UTC: a day, a week
// from Monday, a calendar month.
type BudgetPeriod string

// The budget periods.
const (
	PeriodDay   BudgetPeriod = "day"
	PeriodWeek  BudgetPeriod = "week"
	PeriodMonth BudgetPeriod = "month"
)

// BudgetUnit is what a budget's limit counts.
type BudgetUnit string

// The budget units.
const (
	BudgetTokens BudgetUnit = "tokens" // input plus output tokens
	BudgetUSD    BudgetUnit = "usd"    // cost, in micro-dollars
)

// Budget is a limit on usage over a period.
type Budget struct {
	ID        string
	Scope     BudgetScope
	SubjectID string // the person, agent or provider; "" for a default
	Period    BudgetPeriod
	Unit      BudgetUnit
	// Limit is in tokens, or in micro-dollars for BudgetUSD.
	Limit     int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PeriodBounds is the period holding t: its first instant and the first
// instant of the next (when the budget resets), in UTC.
func (p BudgetPeriod) PeriodBounds(t time.Time) (start, next time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case PeriodWeek:
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		start = day.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 7)
	case PeriodMonth:
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	default:
		return day, day.AddDate(0, 0, 1)
	}
}

// UsageDay is the rollup day of t: its UTC date, YYYY-MM-DD.
func UsageDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Values lists the usage kinds.
func (UsageKind) Values() []string {
	out := make([]string, len(UsageKinds))
	for i, k := range UsageKinds {
		out[i] = string(k)
	}
	return out
}

// Values lists the budget scopes.
func (BudgetScope) Values() []string {
	return []string{string(BudgetPerson), string(BudgetDefault), string(BudgetAgent), string(BudgetProvider)}
}

// Values lists the budget periods.
func (BudgetPeriod) Values() []string {
	return []string{string(PeriodDay), string(PeriodWeek), string(PeriodMonth)}
}

// Values lists the budget units.
func (BudgetUnit) Values() []string { return []string{string(BudgetTokens), string(BudgetUSD)} }

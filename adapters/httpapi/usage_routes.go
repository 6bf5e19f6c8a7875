package httpapi

import (
	"encoding/csv"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/usage"
	"github.com/agents-server/agents-server/ports"
)

// UsageTotalsView sums model calls.
type UsageTotalsView struct {
	Calls             int64   `json:"calls"`
	InputTokens       int64   `json:"input_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens" doc:"The part of input_tokens read from the provider's prompt cache"`
	OutputTokens      int64   `json:"output_tokens"`
	ReasoningTokens   int64   `json:"reasoning_tokens" doc:"The part of output_tokens spent reasoning, where the provider tells it apart"`
	CostUSD           float64 `json:"cost_usd" doc:"US dollars at the prices the calls were recorded with; calls on a model with no price add nothing"`
	UnpricedCalls     int64   `json:"unpriced_calls" doc:"Calls on a model with no price: their tokens count, their cost is not known"`
}

func usageTotalsView(t domain.UsageTotals) UsageTotalsView {
	return UsageTotalsView{Calls: t.Calls, InputTokens: t.InputTokens, CachedInputTokens: t.CachedInputTokens,
		OutputTokens: t.OutputTokens, ReasoningTokens: t.ReasoningTokens, CostUSD: usage.Dollars(t.CostMicros), UnpricedCalls: t.UnpricedCalls}
}

// UsageRowView is one group of a usage report.
type UsageRowView struct {
	Key   string `json:"key" doc:"The person's, agent's, provider's or conversation's id; provider_type/model for a model; the day (YYYY-MM-DD)"`
	Label string `json:"label" doc:"Its name (the username, agent, provider or conversation name, the model); empty for one deleted since"`
	UsageTotalsView
}

// UsageReportView is a usage report.
type UsageReportView struct {
	From    string          `json:"from" doc:"The first day covered (UTC, YYYY-MM-DD)"`
	To      string          `json:"to" doc:"The last day covered, inclusive"`
	GroupBy string          `json:"group_by" enum:"usage_group"`
	Rows    []UsageRowView  `json:"rows" doc:"The groups, largest cost (then tokens) first; by day, oldest first"`
	Totals  UsageTotalsView `json:"totals" doc:"Everything the range and filters select, not only the rows a limit kept"`
}

func usageReportView(r usage.Report) UsageReportView {
	v := UsageReportView{From: r.From, To: r.To, GroupBy: string(r.GroupBy), Totals: usageTotalsView(r.Totals), Rows: make([]UsageRowView, len(r.Rows))}
	for i, row := range r.Rows {
		v.Rows[i] = UsageRowView{Key: row.Key, Label: row.Label, UsageTotalsView: usageTotalsView(row.UsageTotals)}
	}
	return v
}

// MyUsageView is the caller's own usage and the budgets that apply to it.
type MyUsageView struct {
	UsageReportView
	Budgets []BudgetView `json:"budgets" doc:"The budgets the caller's calls answer to, with the caller's consumption"`
}

// BudgetView is a budget with its consumption in the current period.
type BudgetView struct {
	ID          string    `json:"id"`
	Scope       string    `json:"scope" enum:"budget_scope"`
	SubjectID   string    `json:"subject_id" doc:"The person, agent or provider; empty for a default budget"`
	SubjectName string    `json:"subject_name" doc:"Its name (\"each member\" for a default budget); empty when it is gone"`
	Period      string    `json:"period" enum:"budget_period" doc:"day, week (from Monday) or month, in UTC"`
	Unit        string    `json:"unit" enum:"budget_unit"`
	Limit       float64   `json:"limit" doc:"Tokens (input plus output), or US dollars"`
	Consumed    float64   `json:"consumed" doc:"Used in the current period, in the budget's unit; a default budget's is the caller's own on /usage/me and its most consuming member's on /budgets"`
	Percent     int       `json:"percent"`
	ResetsAt    time.Time `json:"resets_at" doc:"When the current period ends"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func budgetView(v usage.BudgetView) BudgetView {
	b := v.Budget
	return BudgetView{ID: b.ID, Scope: string(b.Scope), SubjectID: b.SubjectID, SubjectName: v.SubjectName, Period: string(b.Period),
		Unit: string(b.Unit), Limit: inUnit(b.Unit, b.Limit), Consumed: inUnit(b.Unit, v.Consumed), Percent: v.Percent,
		ResetsAt: v.ResetsAt, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

// inUnit shows a budget quantity: tokens as they are, dollars from micros.
func inUnit(u domain.BudgetUnit, v int64) float64 {
	if u == domain.BudgetUSD {
		return usage.Dollars(v)
	}
	return float64(v)
}

// fromUnit reads a budget quantity from JSON: dollars to micros, or
// tokens, which are whole (a fraction is refused, not cut).
func fromUnit(u domain.BudgetUnit, v float64) (int64, error) {
	if u == domain.BudgetUSD {
		return usage.Micros(v), nil
	}
	if v != math.Trunc(v) || math.Abs(v) > math.MaxInt64/2 {
		return 0, errs.Field("limit", "a limit in tokens is a whole number")
	}
	return int64(v), nil
}

// BudgetsView lists the budgets.
type BudgetsView struct {
	Budgets []BudgetView `json:"budgets"`
}

// BudgetRequest creates a budget.
type BudgetRequest struct {
	Scope     string  `json:"scope" required:"true" enum:"budget_scope" doc:"person, default (each member without a person budget of the period and unit), agent or provider"`
	SubjectID string  `json:"subject_id,omitempty" doc:"The person's, agent's or provider's id; omitted for a default budget"`
	Period    string  `json:"period" required:"true" enum:"budget_period"`
	Unit      string  `json:"unit" required:"true" enum:"budget_unit"`
	Limit     float64 `json:"limit" required:"true" doc:"Tokens (input plus output), or US dollars"`
}

// BudgetLimitRequest changes a budget's limit.
type BudgetLimitRequest struct {
	Limit float64 `json:"limit" required:"true" doc:"Tokens, or US dollars, as the budget's unit"`
}

// PriceView is a model's price.
type PriceView struct {
	ID                 string    `json:"id"`
	ProviderType       string    `json:"provider_type"`
	Model              string    `json:"model"`
	InputPerMTok       float64   `json:"input_per_mtok" doc:"US dollars per million input tokens not read from the cache"`
	CachedInputPerMTok float64   `json:"cached_input_per_mtok" doc:"US dollars per million cached input tokens; 0: as input"`
	OutputPerMTok      float64   `json:"output_per_mtok" doc:"US dollars per million output tokens"`
	Source             string    `json:"source" doc:"Where the figure came from"`
	AsOf               string    `json:"as_of" doc:"The day the figure was read (YYYY-MM-DD)"`
	UpdatedAt          time.Time `json:"updated_at"`
}

func priceView(p domain.Price) PriceView {
	return PriceView{ID: p.ID, ProviderType: p.ProviderType, Model: p.Model, InputPerMTok: usage.Dollars(p.InputMicros),
		CachedInputPerMTok: usage.Dollars(p.CachedInputMicros), OutputPerMTok: usage.Dollars(p.OutputMicros), Source: p.Source,
		AsOf: p.AsOf, UpdatedAt: p.UpdatedAt}
}

// PricesView is the price table.
type PricesView struct {
	Prices []PriceView `json:"prices"`
}

// PriceRequest sets a model's price.
type PriceRequest struct {
	ProviderType       string  `json:"provider_type" required:"true" doc:"openai, anthropic, or a program's own provider type"`
	Model              string  `json:"model" required:"true" doc:"The model's name as calls name it (a dated version falls back to this name)"`
	InputPerMTok       float64 `json:"input_per_mtok" required:"true"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok,omitempty"`
	OutputPerMTok      float64 `json:"output_per_mtok" required:"true"`
	Source             string  `json:"source,omitempty"`
	AsOf               string  `json:"as_of,omitempty" doc:"YYYY-MM-DD"`
}

func usageFilters(withUser bool) []QueryParam {
	q := []QueryParam{
		{Name: "from", Type: "string", Description: "The first day (UTC, YYYY-MM-DD); default 29 days before to"},
		{Name: "to", Type: "string", Description: "The last day, inclusive; default today (UTC)"},
		{Name: "agent_id", Type: "string", Description: "Only this agent's calls"},
		{Name: "provider_id", Type: "string", Description: "Only calls on this provider"},
	}
	if withUser {
		q = append(q, QueryParam{Name: "user_id", Type: "string", Description: "Only calls charged to this person"})
	}
	return q
}

func reportParams(withUser bool) []QueryParam {
	return append(usageFilters(withUser),
		QueryParam{Name: "group_by", Type: "string", Description: "person, agent, provider, model, day (the default) or conversation"},
		QueryParam{Name: "limit", Type: "integer", Description: "At most this many groups (the largest); default every group",
			Bound: between(1, usage.MaxReportLimit)})
}

func (s *Server) usageRoutes() []Route {
	p := APIPrefix + "/usage"
	return []Route{
		op(http.MethodGet, p, "getUsage", "usage",
			"The team's model calls summed (admins): tokens and cost over a range of days, grouped by person, agent, provider, model, day or conversation",
			http.StatusOK, s.handleUsage).WithQuery(reportParams(true)...).WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		op(http.MethodGet, p+"/me", "getMyUsage", "usage",
			"The caller's own model calls summed, grouped as getUsage's (not by person), and the budgets they answer to",
			http.StatusOK, s.handleMyUsage).WithQuery(reportParams(false)...).WithRefusals(http.StatusBadRequest),
		raw(http.MethodGet, p+"/export", "exportUsage", "usage",
			"Every model call of the range (admins) as CSV, oldest first: who, agent, provider, model, conversation, run, task, kind, outcome, tokens, cost",
			"text/csv", s.handleExportUsage(false)).WithQuery(usageFilters(true)...).WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		raw(http.MethodGet, p+"/me/export", "exportMyUsage", "usage",
			"The caller's own model calls of the range as CSV, as exportUsage's",
			"text/csv", s.handleExportUsage(true)).WithQuery(usageFilters(false)...).WithRefusals(http.StatusBadRequest),
		op(http.MethodGet, APIPrefix+"/budgets", "listBudgets", "usage",
			"Every budget with its consumption in the current period (admins)", http.StatusOK, s.handleListBudgets).
			WithRefusals(http.StatusForbidden),
		op(http.MethodPost, APIPrefix+"/budgets", "createBudget", "usage",
			"Add a budget (admins): a limit in tokens or dollars per day, week or month for a person, every member, an agent or a provider, "+
				"checked before every model call", http.StatusCreated, s.handleCreateBudget).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPatch, APIPrefix+"/budgets/:id", "updateBudget", "usage",
			"Change a budget's limit (admins)", http.StatusOK, s.handleUpdateBudget).WithRefusals(http.StatusForbidden),
		op(http.MethodDelete, APIPrefix+"/budgets/:id", "deleteBudget", "usage",
			"Remove a budget (admins)", http.StatusNoContent, s.handleDeleteBudget).WithRefusals(http.StatusForbidden),
		op(http.MethodGet, APIPrefix+"/prices", "listPrices", "usage",
			"The price table (admins): what each model costs per million tokens, with the figure's source and date",
			http.StatusOK, s.handleListPrices).WithRefusals(http.StatusForbidden),
		op(http.MethodPut, APIPrefix+"/prices", "putPrice", "usage",
			"Set a model's price (admins), replacing the one of its provider type and model; calls recorded before keep their cost",
			http.StatusOK, s.handlePutPrice).WithRefusals(http.StatusForbidden),
		op(http.MethodDelete, APIPrefix+"/prices/:id", "deletePrice", "usage",
			"Remove a model's price (admins): its calls count tokens and no cost from now on", http.StatusNoContent, s.handleDeletePrice).
			WithRefusals(http.StatusForbidden),
	}
}

// reportQuery reads a report's query; how many groups a report may keep
// is the core service's rule.
func reportQuery(c echo.Context) (usage.ReportQuery, error) {
	q := rangeQuery(c)
	q.GroupBy = c.QueryParam("group_by")
	var err error
	q.Limit, err = limitQuery(c)
	return q, err
}

// rangeQuery reads what an export and a report share: the days and the
// filters.
func rangeQuery(c echo.Context) usage.ReportQuery {
	return usage.ReportQuery{From: c.QueryParam("from"), To: c.QueryParam("to"), Filter: ports.UsageFilter{
		UserID: c.QueryParam("user_id"), AgentID: c.QueryParam("agent_id"), ProviderID: c.QueryParam("provider_id")}}
}

func (s *Server) handleUsage(c echo.Context, _ *NoBody) (UsageReportView, error) {
	q, err := reportQuery(c)
	if err != nil {
		return UsageReportView{}, err
	}
	r, err := s.deps.Usage.Report(c.Request().Context(), caller(c), q)
	return usageReportView(r), err
}

func (s *Server) handleMyUsage(c echo.Context, _ *NoBody) (MyUsageView, error) {
	ctx, p := c.Request().Context(), caller(c)
	q, err := reportQuery(c)
	if err != nil {
		return MyUsageView{}, err
	}
	r, err := s.deps.Usage.Mine(ctx, p, q)
	if err != nil {
		return MyUsageView{}, err
	}
	budgets, err := s.deps.Usage.MyBudgets(ctx, p)
	return MyUsageView{UsageReportView: usageReportView(r), Budgets: mapAll(budgets, budgetView)}, err
}

// usageCSVHeader names the export's columns.
var usageCSVHeader = []string{"id", "at", "user_id", "agent_id", "provider_id", "provider_type", "model", "session_id", "run_id",
	"task_id", "kind", "outcome", "input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "cost_usd"}

func usageCSVRow(r domain.UsageRecord) []string {
	cost := "" // no price: not known, which is not $0
	if r.Priced {
		cost = strconv.FormatFloat(usage.Dollars(r.CostMicros), 'f', 6, 64)
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{r.ID, r.At.UTC().Format(time.RFC3339Nano), r.UserID, r.AgentID, r.ProviderID, r.ProviderType, csvSafe(r.Model),
		r.SessionID, r.RunID, r.TaskID, string(r.Kind), r.Outcome, n(r.InputTokens), n(r.CachedInputTokens), n(r.OutputTokens),
		n(r.ReasoningTokens), cost}
}

// csvSafe keeps a cell a spreadsheet would run as a formula a string.
func csvSafe(v string) string {
	if v != "" && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@') {
		return "'" + v
	}
	return v
}

func (s *Server) handleExportUsage(mine bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, p, q := c.Request().Context(), caller(c), rangeQuery(c)
		started := false
		var w *csv.Writer
		start := func() {
			h := c.Response().Header()
			h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
			h.Set(echo.HeaderContentDisposition, `attachment; filename="usage.csv"`)
			c.Response().WriteHeader(http.StatusOK)
			w = csv.NewWriter(c.Response())
			_ = w.Write(usageCSVHeader)
			started = true
		}
		err := s.deps.Usage.Export(ctx, p, mine, q, func(page []domain.UsageRecord) error {
			if !started {
				start()
			}
			for _, r := range page {
				if err := w.Write(usageCSVRow(r)); err != nil {
					return err
				}
			}
			w.Flush()
			return w.Error()
		})
		if !started {
			if err != nil {
				return err // refused before anything was written: an error envelope
			}
			start()
			w.Flush()
			return nil
		}
		if err != nil {
			s.log.Warn("the usage export stopped", "err", err)
		}
		return nil
	}
}

func (s *Server) handleListBudgets(c echo.Context, _ *NoBody) (BudgetsView, error) {
	list, err := s.deps.Usage.ListBudgets(c.Request().Context(), caller(c))
	return BudgetsView{Budgets: mapAll(list, budgetView)}, err
}

func (s *Server) handleCreateBudget(c echo.Context, req *BudgetRequest) (BudgetView, error) {
	unit := domain.BudgetUnit(req.Unit)
	limit, err := fromUnit(unit, req.Limit)
	if err != nil {
		return BudgetView{}, err
	}
	v, err := s.deps.Usage.CreateBudget(c.Request().Context(), caller(c), usage.BudgetInput{Scope: domain.BudgetScope(req.Scope),
		SubjectID: req.SubjectID, Period: domain.BudgetPeriod(req.Period), Unit: unit, Limit: limit})
	return budgetView(v), err
}

func (s *Server) handleUpdateBudget(c echo.Context, req *BudgetLimitRequest) (BudgetView, error) {
	ctx, p := c.Request().Context(), caller(c)
	b, err := s.deps.Usage.Budget(ctx, p, c.Param("id"))
	if err != nil {
		return BudgetView{}, err
	}
	limit, err := fromUnit(b.Unit, req.Limit)
	if err != nil {
		return BudgetView{}, err
	}
	v, err := s.deps.Usage.UpdateBudget(ctx, p, b.ID, limit)
	return budgetView(v), err
}

func (s *Server) handleDeleteBudget(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Usage.DeleteBudget(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleListPrices(c echo.Context, _ *NoBody) (PricesView, error) {
	list, err := s.deps.Usage.ListPrices(c.Request().Context(), caller(c))
	return PricesView{Prices: mapAll(list, priceView)}, err
}

func (s *Server) handlePutPrice(c echo.Context, req *PriceRequest) (PriceView, error) {
	p, err := s.deps.Usage.PutPrice(c.Request().Context(), caller(c), domain.Price{ProviderType: req.ProviderType, Model: req.Model,
		InputMicros: usage.Micros(req.InputPerMTok), CachedInputMicros: usage.Micros(req.CachedInputPerMTok),
		OutputMicros: usage.Micros(req.OutputPerMTok), Source: req.Source, AsOf: req.AsOf})
	return priceView(p), err
}

func (s *Server) handleDeletePrice(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Usage.DeletePrice(c.Request().Context(), caller(c), c.Param("id"))
}

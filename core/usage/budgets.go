package usage

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// BudgetInput is a budget as an admin writes it; Limit is in tokens, or
// in micro-dollars for a budget in dollars.
type BudgetInput struct {
	Scope     domain.BudgetScope
	SubjectID string
	Period    domain.BudgetPeriod
	Unit      domain.BudgetUnit
	Limit     int64
}

// maxBudgetLimit bounds a limit: a trillion tokens, or a million dollars.
const maxBudgetLimit = 1_000_000_000_000

// ListBudgets returns every budget with its consumption now (admins); a
// default budget's is its most consuming member's.
func (s *Service) ListBudgets(ctx context.Context, p domain.Principal) ([]BudgetView, error) {
	if err := p.RequireAdmin(); err != nil {
		return nil, err
	}
	budgets, err := s.d.Store.ListBudgets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BudgetView, 0, len(budgets))
	for _, b := range budgets {
		v, err := s.view(ctx, b, "")
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// MyBudgets returns the budgets that apply to the caller's own calls,
// with the caller's consumption (the agent and provider ones count every
// person's calls), or none when budgets do not apply to them.
func (s *Service) MyBudgets(ctx context.Context, p domain.Principal) ([]BudgetView, error) {
	if p.IsAdmin() {
		if apply, err := s.d.Settings.Bool(ctx, settingApplyToAdmins); err != nil || !apply {
			return []BudgetView{}, err
		}
	}
	budgets, err := s.d.Store.ListBudgets(ctx)
	if err != nil {
		return nil, err
	}
	out := []BudgetView{}
	for _, b := range applicable(budgets, p.User.ID, "", "") {
		v, err := s.view(ctx, b, p.User.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// BudgetView is a budget with its subject's name and its consumption in
// the current period.
type BudgetView struct {
	Status
	SubjectName string
}

// view reads a budget's consumption: for a default budget, userID's, or
// with no userID its most consuming member's.
func (s *Service) view(ctx context.Context, b domain.Budget, userID string) (BudgetView, error) {
	now := s.d.Clock.Now()
	v := BudgetView{SubjectName: s.subjectName(ctx, b)}
	if b.Scope != domain.BudgetDefault || userID != "" {
		st, err := s.status(ctx, b, userID, now)
		v.Status = st
		return v, err
	}
	users, err := s.d.Users.ListUsers(ctx)
	if err != nil {
		return v, err
	}
	_, v.ResetsAt = b.Period.PeriodBounds(now)
	v.Budget = b
	for _, u := range users {
		st, err := s.status(ctx, b, u.ID, now)
		if err != nil {
			return v, err
		}
		if st.Consumed > v.Consumed {
			v.Status = st
		}
	}
	return v, nil
}

// subjectName names a budget's subject ("" when it is gone).
func (s *Service) subjectName(ctx context.Context, b domain.Budget) string {
	switch b.Scope {
	case domain.BudgetPerson:
		if u, err := s.d.Users.FindUserByID(ctx, b.SubjectID); err == nil {
			return u.Username
		}
	case domain.BudgetDefault:
		return "each member"
	case domain.BudgetAgent:
		if a, err := s.d.Agents.FindAgent(ctx, b.SubjectID); err == nil {
			return a.Name
		}
	case domain.BudgetProvider:
		if p, err := s.d.Providers.FindProvider(ctx, b.SubjectID); err == nil {
			return p.Name
		}
	}
	return ""
}

// CreateBudget adds a budget (admins). Returns validation naming the
// field, or conflict when the subject has a budget of that period and
// unit already.
func (s *Service) CreateBudget(ctx context.Context, p domain.Principal, in BudgetInput) (BudgetView, error) {
	if err := p.RequireAdmin(); err != nil {
		return BudgetView{}, err
	}
	in.SubjectID = strings.TrimSpace(in.SubjectID)
	var f errs.FieldErrors
	switch in.Scope {
	case domain.BudgetDefault:
		if in.SubjectID != "" {
			f.Add("subject_id", "must be empty: a default budget is every member's")
		}
	case domain.BudgetPerson, domain.BudgetAgent, domain.BudgetProvider:
		if in.SubjectID == "" {
			f.Add("subject_id", "is required: the %s the budget limits", in.Scope)
		} else if !s.exists(ctx, in.Scope, in.SubjectID) {
			f.Add("subject_id", "no such %s", in.Scope)
		}
	default:
		f.Add("scope", "must be person, default, agent or provider")
	}
	switch in.Period {
	case domain.PeriodDay, domain.PeriodWeek, domain.PeriodMonth:
	default:
		f.Add("period", "must be day, week or month")
	}
	switch in.Unit {
	case domain.BudgetTokens, domain.BudgetUSD:
	default:
		f.Add("unit", "must be tokens or usd")
	}
	checkLimit(&f, in.Limit)
	if err := f.Err(); err != nil {
		return BudgetView{}, err
	}
	now := s.d.Clock.Now()
	b := domain.Budget{ID: s.d.IDs.NewID(), Scope: in.Scope, SubjectID: in.SubjectID, Period: in.Period, Unit: in.Unit,
		Limit: in.Limit, CreatedAt: now, UpdatedAt: now}
	ctx = audit.Change(ctx, now, "budget.create", audit.Object{Kind: "budget", ID: b.ID, Name: string(b.Scope) + " " + string(b.Period)},
		"scope", "subject_id", "period", "unit", "limit")
	if err := s.d.Store.CreateBudget(ctx, b); err != nil {
		if errs.Is(err, errs.Conflict) {
			return BudgetView{}, errs.E(errs.Conflict, "this %s already has a %s budget in %s: change its limit instead", b.Scope, b.Period, b.Unit)
		}
		return BudgetView{}, err
	}
	return s.view(ctx, b, "")
}

func checkLimit(f *errs.FieldErrors, limit int64) {
	if limit <= 0 || limit > maxBudgetLimit {
		f.Add("limit", "must be more than 0 (tokens, or dollars) and at most a trillion tokens or a million dollars")
	}
}

// exists says whether a budget's subject is there to limit.
func (s *Service) exists(ctx context.Context, scope domain.BudgetScope, id string) bool {
	var err error
	switch scope {
	case domain.BudgetPerson:
		_, err = s.d.Users.FindUserByID(ctx, id)
	case domain.BudgetAgent:
		_, err = s.d.Agents.FindAgent(ctx, id)
	case domain.BudgetProvider:
		_, err = s.d.Providers.FindProvider(ctx, id)
	}
	return err == nil
}

// UpdateBudget changes a budget's limit (admins).
func (s *Service) UpdateBudget(ctx context.Context, p domain.Principal, id string, limit int64) (BudgetView, error) {
	if err := p.RequireAdmin(); err != nil {
		return BudgetView{}, err
	}
	var f errs.FieldErrors
	checkLimit(&f, limit)
	if err := f.Err(); err != nil {
		return BudgetView{}, err
	}
	b, err := s.d.Store.GetBudget(ctx, id)
	if err != nil {
		return BudgetView{}, err
	}
	b.Limit, b.UpdatedAt = limit, s.d.Clock.Now()
	ctx = audit.Change(ctx, b.UpdatedAt, "budget.update", audit.Object{Kind: "budget", ID: b.ID, Name: string(b.Scope) + " " + string(b.Period)}, "limit")
	if err := s.d.Store.UpdateBudget(ctx, b); err != nil {
		return BudgetView{}, err
	}
	return s.view(ctx, b, "")
}

// DeleteBudget removes a budget (admins).
func (s *Service) DeleteBudget(ctx context.Context, p domain.Principal, id string) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	ctx = audit.Change(ctx, s.d.Clock.Now(), "budget.delete", audit.Object{Kind: "budget", ID: id})
	return s.d.Store.DeleteBudget(ctx, id)
}

// Budget returns one budget (admins).
func (s *Service) Budget(ctx context.Context, p domain.Principal, id string) (domain.Budget, error) {
	if err := p.RequireAdmin(); err != nil {
		return domain.Budget{}, err
	}
	return s.d.Store.GetBudget(ctx, id)
}

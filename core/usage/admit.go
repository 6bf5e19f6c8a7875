package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// settingApplyToAdmins is the switch that holds admins to budgets too.
const settingApplyToAdmins = settings.KeyBudgetsApplyToAdmins

// nearPercent is how far into a budget a call is told it nears the limit.
const nearPercent = 80

// Admit checks the budgets that apply to a call before it is sent:
// budget_exceeded naming the first one used up, and when it resets. A
// budget is used up once its consumption reaches its limit, so a run
// stops at its next call after crossing it; concurrent calls admitted
// together may each overshoot by their own call, never more. The ones
// past 80% are told to call.Near.
func (s *Service) Admit(ctx context.Context, call ports.UsageCall, providerID string) error {
	budgets, err := s.d.Store.ListBudgets(ctx)
	if err != nil || len(budgets) == 0 {
		return err
	}
	user, err := s.charged(ctx, call.UserID)
	if err != nil {
		return err
	}
	if user.IsAdmin() {
		apply, err := s.d.Settings.Bool(ctx, settingApplyToAdmins)
		if err != nil || !apply {
			return err
		}
	}
	now := s.d.Clock.Now()
	for _, b := range applicable(budgets, user.ID, call.AgentID, providerID) {
		st, err := s.status(ctx, b, user.ID, now)
		if err != nil {
			return err
		}
		if st.Consumed >= b.Limit {
			return errs.E(errs.BudgetExceeded, "%s is used up (%s of %s); it resets %s",
				s.describe(ctx, b, user), amount(b.Unit, st.Consumed), amount(b.Unit, b.Limit), st.ResetsAt.Format("2006-01-02 15:04 UTC"))
		}
		if call.Near != nil && st.Percent >= nearPercent {
			call.Near(ports.BudgetNotice{BudgetID: b.ID, Percent: st.Percent, ResetsAt: st.ResetsAt,
				Message: fmt.Sprintf("%s is %d%% used (%s of %s); it resets %s", s.describe(ctx, b, user), st.Percent,
					amount(b.Unit, st.Consumed), amount(b.Unit, b.Limit), st.ResetsAt.Format("2006-01-02 15:04 UTC"))})
		}
	}
	return nil
}

// charged reads the person a call is charged to; a call for nobody (the
// zero user) is held to the agent and provider budgets alone.
func (s *Service) charged(ctx context.Context, userID string) (domain.User, error) {
	if userID == "" {
		return domain.User{}, nil
	}
	u, err := s.d.Users.FindUserByID(ctx, userID)
	if errs.Is(err, errs.NotFound) {
		return domain.User{ID: userID}, nil
	}
	return u, err
}

// applicable picks the budgets a call answers to: the person's own, or,
// for a period and unit they have none of, the default; the agent's; the
// provider's.
func applicable(budgets []domain.Budget, userID, agentID, providerID string) []domain.Budget {
	own := map[string]bool{}
	for _, b := range budgets {
		if b.Scope == domain.BudgetPerson && b.SubjectID == userID {
			own[string(b.Period)+"/"+string(b.Unit)] = true
		}
	}
	var out []domain.Budget
	for _, b := range budgets {
		switch {
		case b.Scope == domain.BudgetPerson && userID != "" && b.SubjectID == userID,
			b.Scope == domain.BudgetDefault && userID != "" && !own[string(b.Period)+"/"+string(b.Unit)],
			b.Scope == domain.BudgetAgent && agentID != "" && b.SubjectID == agentID,
			b.Scope == domain.BudgetProvider && providerID != "" && b.SubjectID == providerID:
			out = append(out, b)
		}
	}
	return out
}

// Status is a budget's consumption in its current period.
type Status struct {
	Budget   domain.Budget
	Consumed int64 // in the budget's unit: tokens, or micro-dollars
	Percent  int
	ResetsAt time.Time
}

// status sums a budget's consumption in the period holding now; a default
// budget counts userID's calls.
func (s *Service) status(ctx context.Context, b domain.Budget, userID string, now time.Time) (Status, error) {
	start, next := b.Period.PeriodBounds(now)
	f := ports.UsageFilter{}
	switch b.Scope {
	case domain.BudgetPerson:
		f.UserID = b.SubjectID
	case domain.BudgetDefault:
		f.UserID = userID
	case domain.BudgetAgent:
		f.AgentID = b.SubjectID
	case domain.BudgetProvider:
		f.ProviderID = b.SubjectID
	}
	t, err := s.d.Store.UsageTotals(ctx, f, domain.UsageDay(start), domain.UsageDay(next.Add(-time.Nanosecond)))
	if err != nil {
		return Status{}, err
	}
	st := Status{Budget: b, Consumed: t.Tokens(), ResetsAt: next}
	if b.Unit == domain.BudgetUSD {
		st.Consumed = t.CostMicros
	}
	if b.Limit > 0 {
		st.Percent = int(min(st.Consumed*100/b.Limit, 999))
	} else {
		st.Percent = 100
	}
	return st, nil
}

// describe names a budget in a person's terms: "the monthly budget of
// agent Researcher".
func (s *Service) describe(ctx context.Context, b domain.Budget, user domain.User) string {
	period := map[domain.BudgetPeriod]string{domain.PeriodDay: "daily", domain.PeriodWeek: "weekly", domain.PeriodMonth: "monthly"}[b.Period]
	switch b.Scope {
	case domain.BudgetPerson, domain.BudgetDefault:
		who := user.Username
		if who == "" {
			who = user.ID
		}
		if b.Scope == domain.BudgetDefault {
			return fmt.Sprintf("the %s budget every member has (%s's)", period, who)
		}
		return fmt.Sprintf("%s's %s budget", who, period)
	case domain.BudgetAgent:
		return fmt.Sprintf("the %s budget of agent %s", period, s.subjectName(ctx, b))
	default:
		return fmt.Sprintf("the %s budget of provider %s", period, s.subjectName(ctx, b))
	}
}

// amount shows a quantity of a unit: "12,500 tokens", "$4.20".
func amount(u domain.BudgetUnit, v int64) string {
	if u == domain.BudgetUSD {
		return fmt.Sprintf("$%.2f", Dollars(v))
	}
	return groupThousands(v) + " tokens"
}

func groupThousands(v int64) string {
	s := fmt.Sprint(v)
	neg := v < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

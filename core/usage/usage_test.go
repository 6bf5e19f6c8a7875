package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/usage"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// named finds agents and providers by id in a map.
type named map[string]string

func (n named) FindAgent(_ context.Context, id string) (domain.Agent, error) {
	if name, ok := n[id]; ok {
		return domain.Agent{ID: id, AgentSpec: domain.AgentSpec{Name: name}}, nil
	}
	return domain.Agent{}, errs.E(errs.NotFound, "agent not found")
}

func (n named) FindProvider(_ context.Context, id string) (domain.Provider, error) {
	if name, ok := n[id]; ok {
		return domain.Provider{ID: id, Name: name}, nil
	}
	return domain.Provider{}, errs.E(errs.NotFound, "provider not found")
}

// owned is ann's conversation "s1" and run "r1".
type owned struct{}

func (owned) FindSession(_ context.Context, id string) (domain.Session, error) {
	if id != "s1" {
		return domain.Session{}, errs.E(errs.NotFound, "session not found")
	}
	return domain.Session{ID: id, OwnerID: "ann"}, nil
}

func (owned) FindRun(_ context.Context, id string) (domain.Run, error) {
	if id != "r1" {
		return domain.Run{}, errs.E(errs.NotFound, "run not found")
	}
	return domain.Run{ID: id, SessionID: "s1", OwnerID: "ann"}, nil
}

// switches answers every bool setting with on.
type switches struct{ on bool }

func (s *switches) Bool(context.Context, string) (bool, error) { return s.on, nil }

type fixture struct {
	svc    *usage.Service
	store  *porttest.UsageStore
	clock  *porttest.Clock
	llm    *porttest.LLM
	meter  ports.LLM
	admins *switches
	admin  domain.Principal
	ann    domain.User
}

func newFixture(t testing.TB, start time.Time) *fixture {
	t.Helper()
	f := &fixture{store: &porttest.UsageStore{}, clock: porttest.NewClock(start), llm: &porttest.LLM{}, admins: &switches{}}
	users := &porttest.UserStore{}
	f.ann = domain.User{ID: "ann", Username: "ann", Role: domain.RoleMember}
	admin := domain.User{ID: "root", Username: "root", Role: domain.RoleAdmin}
	for _, u := range []domain.User{f.ann, admin} {
		if err := users.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	f.admin = domain.Principal{User: admin}
	names := named{"agent-1": "Researcher", "prov-1": "OpenAI"}
	f.svc = usage.New(usage.Deps{Store: f.store, Users: users, Agents: names, Providers: names, Conversations: owned{}, Meta: &porttest.SettingStore{},
		Settings: f.admins, Clock: f.clock, IDs: &porttest.IDs{}})
	f.meter = f.svc.Meter(f.llm)
	return f
}

// call makes one metered call for ann on agent-1 at prov-1; the model
// answers with in input and out output tokens.
func (f *fixture) call(t *testing.T, in, out int64) error {
	t.Helper()
	f.llm.Queue(porttest.Reply{Text: "ok", Usage: domain.Usage{InputTokens: in, OutputTokens: out}})
	ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{Kind: domain.UsageChat, UserID: "ann", AgentID: "agent-1", RunID: "run-1"})
	_, err := f.meter.Generate(ctx, ports.ModelRequest{Endpoint: ports.ProviderEndpoint{ProviderID: "prov-1", Type: "openai", Name: "OpenAI"},
		Model: "gpt-4o-2024-08-06"}, nil)
	return err
}

func (f *fixture) budget(t *testing.T, in usage.BudgetInput) {
	t.Helper()
	if _, err := f.svc.CreateBudget(context.Background(), f.admin, in); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetPeriodsResetAtTheirBoundary: a used-up budget refuses until
// the first instant of its next period (UTC): the next day, the Monday,
// the first of the month — and not an instant before.
func TestBudgetPeriodsResetAtTheirBoundary(t *testing.T) {
	for _, c := range []struct {
		period      domain.BudgetPeriod
		start, edge time.Time
	}{
		{domain.PeriodDay, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)},
		// Thursday 3 December: the week ends as Monday 7 December begins.
		{domain.PeriodWeek, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)},
		{domain.PeriodMonth, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(string(c.period), func(t *testing.T) {
			f := newFixture(t, c.start)
			f.budget(t, usage.BudgetInput{Scope: domain.BudgetPerson, SubjectID: "ann", Period: c.period, Unit: domain.BudgetTokens, Limit: 1000})
			if err := f.call(t, 900, 200); err != nil {
				t.Fatal(err)
			}
			err := f.call(t, 1, 1)
			if !errs.Is(err, errs.BudgetExceeded) || !strings.Contains(errs.MessageOf(err), "resets "+c.edge.Format("2006-01-02 15:04 UTC")) {
				t.Fatalf("over the limit: %v, want budget_exceeded resetting at %s", err, c.edge)
			}
			f.clock.Set(c.edge.Add(-time.Millisecond))
			if err := f.call(t, 1, 1); !errs.Is(err, errs.BudgetExceeded) {
				t.Fatalf("an instant before the boundary: %v", err)
			}
			f.clock.Set(c.edge)
			if err := f.call(t, 1, 1); err != nil {
				t.Fatalf("at the boundary: %v", err)
			}
			if n := len(f.llm.Requests()); n != 2 {
				t.Fatalf("%d calls reached the model, want 2: a refused call is never sent", n)
			}
		})
	}
}

// TestWhichBudgetsApply: a person's own budget replaces the default of
// its period and unit; agent and provider budgets count everyone; admins
// answer to budgets only when the setting says so; 80% is told once per
// check to whoever listens.
func TestWhichBudgetsApply(t *testing.T) {
	f := newFixture(t, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	f.budget(t, usage.BudgetInput{Scope: domain.BudgetDefault, Period: domain.PeriodDay, Unit: domain.BudgetTokens, Limit: 10})
	f.budget(t, usage.BudgetInput{Scope: domain.BudgetPerson, SubjectID: "ann", Period: domain.PeriodDay, Unit: domain.BudgetTokens, Limit: 1000})
	if err := f.call(t, 400, 400); err != nil {
		t.Fatalf("ann's own budget replaces the default: %v", err)
	}
	var notices []ports.BudgetNotice
	ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{UserID: "ann", AgentID: "agent-1",
		Near: func(n ports.BudgetNotice) { notices = append(notices, n) }})
	if err := f.svc.Admit(ctx, mustCall(ctx), "prov-1"); err != nil || len(notices) != 1 || notices[0].Percent != 80 ||
		!strings.Contains(notices[0].Message, "ann's daily budget is 80% used (800 tokens of 1,000 tokens)") {
		t.Fatalf("at 80%%: %v %+v", err, notices)
	}
	f.budget(t, usage.BudgetInput{Scope: domain.BudgetAgent, SubjectID: "agent-1", Period: domain.PeriodMonth, Unit: domain.BudgetUSD, Limit: 1})
	if _, err := f.svc.PutPrice(context.Background(), f.admin, domain.Price{ProviderType: "openai", Model: "gpt-4o", InputMicros: 2_500_000, OutputMicros: 10_000_000}); err != nil {
		t.Fatal(err)
	}
	if err := f.call(t, 1, 1); err != nil {
		t.Fatalf("nothing priced yet counted against the dollar budget: %v", err)
	}
	err := f.call(t, 1, 1)
	if !errs.Is(err, errs.BudgetExceeded) || !strings.Contains(errs.MessageOf(err), "the monthly budget of agent Researcher") {
		t.Fatalf("the agent's dollar budget: %v", err)
	}
	// An admin is not held unless the setting says so.
	admin := ports.UsageCall{UserID: "root", AgentID: "agent-1"}
	if err := f.svc.Admit(context.Background(), admin, "prov-1"); err != nil {
		t.Fatalf("an admin held by default: %v", err)
	}
	f.admins.on = true
	if err := f.svc.Admit(context.Background(), admin, "prov-1"); !errs.Is(err, errs.BudgetExceeded) {
		t.Fatalf("with the setting on an admin's call: %v", err)
	}
}

func mustCall(ctx context.Context) ports.UsageCall {
	c, _ := ports.UsageCallOf(ctx)
	return c
}

// TestACallIsPricedWhenRecorded: the cost comes from the price of the
// model asked for (a dated version falls back to its family's price),
// cached input at its own rate; a later price change does not rewrite
// it; a model with no price counts tokens and no cost.
func TestACallIsPricedWhenRecorded(t *testing.T) {
	f := newFixture(t, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	if err := f.svc.SeedPrices(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.llm.Queue(porttest.Reply{Text: "ok", Usage: domain.Usage{InputTokens: 1_000_000, CachedTokens: 400_000, OutputTokens: 100_000}})
	ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{UserID: "ann"})
	ep := ports.ProviderEndpoint{ProviderID: "prov-1", Type: "openai"}
	if _, err := f.meter.Generate(ctx, ports.ModelRequest{Endpoint: ep, Model: "gpt-4o-2024-08-06"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutPrice(context.Background(), f.admin, domain.Price{ProviderType: "openai", Model: "gpt-4o", InputMicros: 1, OutputMicros: 1}); err != nil {
		t.Fatal(err)
	}
	f.llm.Queue(porttest.Reply{Text: "ok", Usage: domain.Usage{InputTokens: 10, OutputTokens: 10}})
	if _, err := f.meter.Generate(ctx, ports.ModelRequest{Endpoint: ep, Model: "in-house-model"}, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := f.store.ListUsage(context.Background(), ports.UsageListQuery{FromDay: "2026-12-01", ToDay: "2026-12-31", Limit: 10})
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %v %v", recs, err)
	}
	// gpt-4o as seeded: 600k × $2.50 + 400k × $1.25 + 100k × $10 per million.
	if !recs[0].Priced || recs[0].CostMicros != 3_000_000 || recs[0].Kind != domain.UsageChat {
		t.Errorf("gpt-4o call %+v, want $3.00", recs[0])
	}
	if recs[1].Priced || recs[1].CostMicros != 0 || recs[1].InputTokens != 10 {
		t.Errorf("unpriced call %+v", recs[1])
	}
}

// TestAFailedCallIsRecordedWithItsOutcome: a refused call and a cancelled
// one are recorded once each, with what the provider reported.
func TestAFailedCallIsRecordedWithItsOutcome(t *testing.T) {
	f := newFixture(t, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{UserID: "ann"})
	f.llm.Queue(porttest.Fail(ports.ModelUnavailable, "overloaded"))
	if _, err := f.meter.Generate(ctx, ports.ModelRequest{Model: "m"}, nil); err == nil {
		t.Fatal("the failure was lost")
	}
	cctx, cancel := context.WithCancel(ctx)
	f.llm.Queue(porttest.Reply{Block: true})
	go func() {
		for f.llm.Open() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := f.meter.Generate(cctx, ports.ModelRequest{Model: "m"}, nil); err == nil {
		t.Fatal("the cancel was lost")
	}
	recs, _ := f.store.ListUsage(context.Background(), ports.UsageListQuery{FromDay: "2026-12-03", ToDay: "2026-12-03", Limit: 10})
	if len(recs) != 2 || recs[0].Outcome != domain.UsageFailed || recs[1].Outcome != domain.UsageCancelled {
		t.Fatalf("records %+v", recs)
	}
}

// TestAConversationsUsageIsItsOwners: a conversation's and a run's usage
// are read by their owner alone; anyone else, admins included, is told
// they do not exist.
func TestAConversationsUsageIsItsOwners(t *testing.T) {
	f := newFixture(t, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	f.llm.Queue(porttest.Reply{Text: "ok", Usage: domain.Usage{InputTokens: 5, OutputTokens: 1}})
	ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{UserID: "ann", SessionID: "s1", RunID: "r1"})
	if _, err := f.meter.Generate(ctx, ports.ModelRequest{Model: "m"}, nil); err != nil {
		t.Fatal(err)
	}
	ann := domain.Principal{User: f.ann}
	if u, err := f.svc.SessionUsage(context.Background(), ann, "s1"); err != nil || u.Calls != 1 {
		t.Fatalf("ann's conversation: %+v %v", u, err)
	}
	if u, err := f.svc.RunUsage(context.Background(), ann, "r1"); err != nil || u.InputTokens != 5 {
		t.Fatalf("ann's run: %+v %v", u, err)
	}
	if byRun, err := f.svc.SessionRunsUsage(context.Background(), ann, "s1"); err != nil || byRun["r1"].Calls != 1 {
		t.Fatalf("ann's conversation by run: %+v %v", byRun, err)
	}
	for _, err := range []error{
		second(f.svc.SessionUsage(context.Background(), f.admin, "s1")),
		second(f.svc.RunUsage(context.Background(), f.admin, "r1")),
		second(f.svc.SessionRunsUsage(context.Background(), f.admin, "s1")),
	} {
		if !errs.Is(err, errs.NotFound) {
			t.Errorf("someone else read ann's usage: %v", err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

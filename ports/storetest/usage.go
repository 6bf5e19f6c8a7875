package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Usage is the contract of ports.UsageStore: a recorded call is in its
// run's, its conversation's and its days' sums at once (an unpriced one
// counted as such, its cost not); a report groups what its days and
// filter select, largest first (by day: oldest first), with the totals of
// everything selected whatever its limit; the export pages in time order;
// a price put twice keeps its row, a seed never overwrites one; budgets
// refuse a duplicate. s must be empty and know no person, agent, provider
// or conversation by name (labels are "" but a model's and a day's).
func Usage(t *testing.T, s ports.UsageStore) {
	ctx := context.Background()
	recs := usageRecords()
	for _, r := range recs {
		if err := s.RecordUsage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range recs {
		recs[i].At = time.UnixMilli(recs[i].At.UnixMilli()).UTC()
	}
	// A record that is there already changes nothing.
	before := usageTotals(t, s, ports.UsageFilter{}, "", "")
	dup := recs[3]
	dup.InputTokens = 1_000_000
	if err := s.RecordUsage(ctx, dup); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("recording a record twice = %v; want conflict", err)
	}
	if after := usageTotals(t, s, ports.UsageFilter{}, "", ""); after != before {
		t.Fatalf("a refused record changed the sums: %+v, then %+v", before, after)
	}

	t.Run("run and conversation sums", func(t *testing.T) { usageRunAndSession(t, s) })
	t.Run("totals", func(t *testing.T) { usageTotalsCases(t, s, recs) })
	t.Run("reports", func(t *testing.T) { usageReports(t, s, recs) })
	t.Run("export", func(t *testing.T) { usageExport(t, s, recs) })
	t.Run("prices", func(t *testing.T) { usagePrices(t, s) })
	t.Run("budgets", func(t *testing.T) { usageBudgets(t, s) })
}

// usageRecords are two people's calls over four days: two runs of one
// person's conversation around midnight, an unpriced playground call, an
// unpriced call whose cost must not count, two calls at one instant.
func usageRecords() []domain.UsageRecord {
	at := func(day string, clock string) time.Time {
		t, err := time.Parse(time.DateOnly+" 15:04:05.000000", day+" "+clock)
		if err != nil {
			panic(err)
		}
		return t
	}
	rec := func(id string, when time.Time, user, agent, provider, ptype, model, session, run string, kind domain.UsageKind,
		in, cached, out, reasoning, cost int64, priced bool) domain.UsageRecord {
		return domain.UsageRecord{ID: id, At: when, UserID: user, AgentID: agent, ProviderID: provider, ProviderType: ptype,
			Model: model, SessionID: session, RunID: run, TaskID: "", Kind: kind, Outcome: domain.UsageOK, InputTokens: in,
			CachedInputTokens: cached, OutputTokens: out, ReasoningTokens: reasoning, CostMicros: cost, Priced: priced}
	}
	r := []domain.UsageRecord{
		rec("use-01", at("2026-11-29", "08:00:00.000000"), "u2", "a2", "p2", "anthropic", "claude", "s4", "run0", domain.UsageChat, 70, 0, 7, 0, 20, true),
		rec("use-02", at("2026-11-30", "23:59:59.999999"), "u1", "a1", "p1", "openai", "gpt-5", "s1", "run1", domain.UsageChat, 1000, 200, 300, 50, 5000, true),
		rec("use-03", at("2026-12-01", "00:00:00.000500"), "u1", "a1", "p1", "openai", "gpt-5", "s1", "run1", domain.UsageChat, 2000, 0, 100, 0, 3000, true),
		rec("use-04", at("2026-12-01", "10:00:00.000000"), "u1", "a2", "p2", "anthropic", "claude", "s2", "run2", domain.UsageTask, 500, 100, 500, 0, 7000, true),
		rec("use-05", at("2026-12-01", "11:00:00.000000"), "u2", "a1", "p1", "openai", "gpt-5", "s3", "run3", domain.UsageChat, 100, 0, 10, 0, 100, true),
		rec("use-06", at("2026-12-01", "12:00:00.000000"), "u2", "", "p2", "anthropic", "local-x", "", "run4", domain.UsagePlayground, 400, 0, 40, 0, 0, false),
		rec("use-08", at("2026-12-02", "09:00:00.000000"), "u2", "a2", "p2", "anthropic", "claude", "s3", "run5", domain.UsageTitle, 50, 0, 5, 0, 999, false),
		rec("use-07", at("2026-12-02", "09:00:00.000000"), "u1", "a1", "p1", "openai", "gpt-5", "s1", "run6", domain.UsageCompaction, 3000, 2500, 200, 0, 1500, true),
	}
	r[4].TaskID, r[4].Outcome = "task1", domain.UsageFailed
	return r
}

func usageTotals(t *testing.T, s ports.UsageStore, f ports.UsageFilter, from, to string) domain.UsageTotals {
	t.Helper()
	got, err := s.UsageTotals(context.Background(), f, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sumOf sums the records match selects, as a store's rollups do.
func sumOf(recs []domain.UsageRecord, match func(domain.UsageRecord) bool) domain.UsageTotals {
	var t domain.UsageTotals
	for _, r := range recs {
		if match(r) {
			t.Add(r)
		}
	}
	return t
}

func usageRunAndSession(t *testing.T, s ports.UsageStore) {
	ctx := context.Background()
	run, err := s.RunUsage(ctx, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if want := (domain.UsageTotals{Calls: 2, InputTokens: 3000, CachedInputTokens: 200, OutputTokens: 400, ReasoningTokens: 50,
		CostMicros: 8000}); run != want {
		t.Fatalf("run1 sums %+v; want %+v", run, want)
	}
	// An unpriced call counts, its cost does not.
	conv, err := s.SessionUsage(ctx, "s3")
	if err != nil {
		t.Fatal(err)
	}
	if want := (domain.UsageTotals{Calls: 2, InputTokens: 150, OutputTokens: 15, CostMicros: 100, UnpricedCalls: 1}); conv != want {
		t.Fatalf("s3 sums %+v; want %+v", conv, want)
	}
	// Run by run, the conversation's calls sum to its own.
	byRun, err := s.SessionRunsUsage(ctx, "s3")
	if err != nil {
		t.Fatal(err)
	}
	var sum domain.UsageTotals
	for _, v := range byRun {
		sum = sum.Plus(v)
	}
	if sum != conv || len(byRun) != 2 || byRun["run3"].Calls != 1 || byRun["run5"].UnpricedCalls != 1 {
		t.Fatalf("s3 by run %+v sums %+v; want %+v", byRun, sum, conv)
	}
	if got, err := s.SessionRunsUsage(ctx, "absent"); err != nil || len(got) != 0 {
		t.Fatalf("an absent conversation's runs %+v, %v", got, err)
	}
	for _, id := range []string{"absent", ""} {
		if got, err := s.RunUsage(ctx, id); err != nil || got != (domain.UsageTotals{}) {
			t.Fatalf("run %q sums %+v, %v; want nothing", id, got, err)
		}
		if got, err := s.SessionUsage(ctx, id); err != nil || got != (domain.UsageTotals{}) {
			t.Fatalf("conversation %q sums %+v, %v; want nothing", id, got, err)
		}
	}
}

func usageTotalsCases(t *testing.T, s ports.UsageStore, recs []domain.UsageRecord) {
	all := usageTotals(t, s, ports.UsageFilter{}, "", "")
	if all.Calls != 8 || all.UnpricedCalls != 2 || all.CostMicros != 16620 || all != sumOf(recs, func(domain.UsageRecord) bool { return true }) {
		t.Fatalf("every call sums %+v", all)
	}
	in := func(from, to string) func(domain.UsageRecord) bool {
		return func(r domain.UsageRecord) bool { d := domain.UsageDay(r.At); return d >= from && d <= to }
	}
	for _, c := range []struct {
		name     string
		f        ports.UsageFilter
		from, to string
		match    func(domain.UsageRecord) bool
		calls    int64
	}{
		// The bounds are days, both inclusive: the call a millisecond
		// before midnight is the day before's.
		{"one day", ports.UsageFilter{}, "2026-12-01", "2026-12-01", in("2026-12-01", "2026-12-01"), 4},
		{"last day", ports.UsageFilter{}, "2026-12-02", "2026-12-02", in("2026-12-02", "2026-12-02"), 2},
		{"person", ports.UsageFilter{UserID: "u1"}, "2026-11-30", "2026-12-01",
			func(r domain.UsageRecord) bool { return r.UserID == "u1" && in("2026-11-30", "2026-12-01")(r) }, 3},
		{"agent", ports.UsageFilter{AgentID: "a2"}, "", "",
			func(r domain.UsageRecord) bool { return r.AgentID == "a2" }, 3},
		{"provider and person", ports.UsageFilter{UserID: "u2", ProviderID: "p2"}, "2026-11-30", "",
			func(r domain.UsageRecord) bool {
				return r.UserID == "u2" && r.ProviderID == "p2" && in("2026-11-30", "9999")(r)
			}, 2},
		{"no day", ports.UsageFilter{}, "2027-01-01", "2027-12-31", in("2027", "2027"), 0},
		{"inverted", ports.UsageFilter{}, "2026-12-02", "2026-12-01", in("2026-12-02", "2026-12-01"), 0},
	} {
		got := usageTotals(t, s, c.f, c.from, c.to)
		if want := sumOf(recs, c.match); got != want || got.Calls != c.calls {
			t.Errorf("%s: %+v; want %+v (%d calls)", c.name, got, want, c.calls)
		}
	}
	for _, bad := range [][2]string{{"2026-13-01", ""}, {"", "yesterday"}, {"2026-12-1", "2026-12-02"}} {
		if _, err := s.UsageTotals(context.Background(), ports.UsageFilter{}, bad[0], bad[1]); errs.CodeOf(err) != errs.Validation {
			t.Errorf("the days %q: %v; want a validation error", bad, err)
		}
	}
}

// wantReport is the report of q over recs, as the port describes it.
func wantReport(recs []domain.UsageRecord, q ports.UsageQuery) ports.UsageReport {
	from, to := cmp.Or(q.FromDay, "0000-01-01"), cmp.Or(q.ToDay, "9999-12-31")
	f := q.Filter
	if q.GroupBy == ports.GroupConversation {
		f = ports.UsageFilter{UserID: f.UserID}
	}
	groups := map[string]*ports.UsageRow{}
	out := ports.UsageReport{Rows: []ports.UsageRow{}}
	for _, r := range recs {
		day := domain.UsageDay(r.At)
		if day < from || day > to || (f.UserID != "" && r.UserID != f.UserID) || (f.AgentID != "" && r.AgentID != f.AgentID) ||
			(f.ProviderID != "" && r.ProviderID != f.ProviderID) || (q.GroupBy == ports.GroupConversation && r.SessionID == "") {
			continue
		}
		var key, label string
		switch q.GroupBy {
		case ports.GroupPerson:
			key = r.UserID
		case ports.GroupAgent:
			key = r.AgentID
		case ports.GroupProvider:
			key = r.ProviderID
		case ports.GroupModel:
			key, label = r.ProviderType+"/"+r.Model, r.Model
		case ports.GroupDay:
			key, label = day, day
		case ports.GroupConversation:
			key = r.SessionID
		}
		g := groups[key]
		if g == nil {
			g = &ports.UsageRow{Key: key, Label: label}
			groups[key] = g
		}
		g.Add(r)
		out.Totals.Add(r)
	}
	for _, g := range groups {
		out.Rows = append(out.Rows, *g)
	}
	slices.SortFunc(out.Rows, func(a, b ports.UsageRow) int {
		if q.GroupBy == ports.GroupDay {
			return cmp.Compare(a.Key, b.Key)
		}
		return cmp.Or(cmp.Compare(b.CostMicros, a.CostMicros), cmp.Compare(b.Tokens(), a.Tokens()), cmp.Compare(a.Key, b.Key))
	})
	if q.Limit > 0 && len(out.Rows) > q.Limit {
		out.Rows = out.Rows[:q.Limit]
	}
	return out
}

func usageReports(t *testing.T, s ports.UsageStore, recs []domain.UsageRecord) {
	ctx := context.Background()
	report := func(q ports.UsageQuery) ports.UsageReport {
		t.Helper()
		got, err := s.UsageReport(ctx, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return got
	}
	var cases []ports.UsageQuery
	for _, g := range ports.UsageGroups {
		for _, f := range []ports.UsageFilter{{}, {UserID: "u2"}, {AgentID: "a1"}, {ProviderID: "p2"}, {UserID: "u1", AgentID: "a2"}} {
			for _, days := range [][2]string{{"", ""}, {"2026-11-30", "2026-12-01"}, {"2026-12-02", "2026-12-02"}, {"2027-01-01", "2027-01-31"}} {
				for _, limit := range []int{0, 1, 2} {
					cases = append(cases, ports.UsageQuery{FromDay: days[0], ToDay: days[1], Filter: f, GroupBy: g, Limit: limit})
				}
			}
		}
	}
	for _, q := range cases {
		got, want := report(q), wantReport(recs, q)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("%+v:\n got %+v\nwant %+v", q, got, want)
		}
	}
	// The figures, once by hand: u1's calls cost more.
	people := report(ports.UsageQuery{GroupBy: ports.GroupPerson})
	if len(people.Rows) != 2 || people.Rows[0].Key != "u1" || people.Rows[0].CostMicros != 16500 || people.Rows[1].UnpricedCalls != 2 {
		t.Fatalf("by person: %+v", people.Rows)
	}
	models := report(ports.UsageQuery{GroupBy: ports.GroupModel, Limit: 1})
	if len(models.Rows) != 1 || models.Rows[0].Key != "openai/gpt-5" || models.Rows[0].Label != "gpt-5" || models.Totals.Calls != 8 {
		t.Fatalf("the top model: %+v", models)
	}
	days := report(ports.UsageQuery{GroupBy: ports.GroupDay, FromDay: "2026-11-30"})
	if len(days.Rows) != 3 || days.Rows[0].Key != "2026-11-30" || days.Rows[2].Label != "2026-12-02" || days.Totals.Calls != 7 {
		t.Fatalf("by day: %+v", days)
	}
	// A conversation report filters by person alone; the playground call
	// is in no conversation.
	convs := report(ports.UsageQuery{GroupBy: ports.GroupConversation, Filter: ports.UsageFilter{AgentID: "a1"}})
	if len(convs.Rows) != 4 || convs.Totals.Calls != 7 {
		t.Fatalf("by conversation: %+v", convs)
	}
	if _, err := s.UsageReport(ctx, ports.UsageQuery{GroupBy: "team"}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("grouping by team: %v; want a validation error", err)
	}
	if _, err := s.UsageReport(ctx, ports.UsageQuery{GroupBy: ports.GroupDay, ToDay: "12/01/2026"}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a malformed day: %v; want a validation error", err)
	}
}

func usageExport(t *testing.T, s ports.UsageStore, recs []domain.UsageRecord) {
	ctx := context.Background()
	list := func(q ports.UsageListQuery) []domain.UsageRecord {
		t.Helper()
		got, err := s.ListUsage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// In time order, then by id: use-07 before use-08, made at one instant.
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, func(a, b domain.UsageRecord) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID)) })
	all := list(ports.UsageListQuery{})
	if fmt.Sprintf("%+v", all) != fmt.Sprintf("%+v", sorted) {
		t.Fatalf("the records:\n got %+v\nwant %+v", all, sorted)
	}
	for _, r := range all {
		if r.At.Location() != time.UTC {
			t.Fatalf("record %s is at %v; want UTC", r.ID, r.At)
		}
	}
	// Pages of 3 walk every record once.
	var paged []domain.UsageRecord
	after := ""
	for range 10 {
		page := list(ports.UsageListQuery{AfterID: after, Limit: 3})
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1].ID
	}
	if fmt.Sprintf("%+v", paged) != fmt.Sprintf("%+v", sorted) {
		t.Fatalf("paged:\n got %+v\nwant %+v", paged, sorted)
	}
	ids := func(rs []domain.UsageRecord) (out []string) {
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		q    ports.UsageListQuery
		want []string
	}{
		{ports.UsageListQuery{FromDay: "2026-12-01", ToDay: "2026-12-01"}, []string{"use-03", "use-04", "use-05", "use-06"}},
		{ports.UsageListQuery{FromDay: "2026-11-30", ToDay: "2026-11-30"}, []string{"use-02"}},
		{ports.UsageListQuery{Filter: ports.UsageFilter{UserID: "u1"}, AfterID: "use-03"}, []string{"use-04", "use-07"}},
		{ports.UsageListQuery{Filter: ports.UsageFilter{AgentID: "a2"}, Limit: 2}, []string{"use-01", "use-04"}},
		{ports.UsageListQuery{Filter: ports.UsageFilter{ProviderID: "p2"}, FromDay: "2026-12-02"}, []string{"use-08"}},
		{ports.UsageListQuery{AfterID: "use-08"}, nil},
	} {
		if got := ids(list(c.q)); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v; want %v", c.q, got, c.want)
		}
	}
	if _, err := s.ListUsage(ctx, ports.UsageListQuery{AfterID: "absent"}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("after an absent record: %v; want a validation error", err)
	}
	if _, err := s.ListUsage(ctx, ports.UsageListQuery{FromDay: "2026-02-30"}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("from February 30th: %v; want a validation error", err)
	}
}

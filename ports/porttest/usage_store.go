package porttest

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// UsageStore is an in-memory ports.UsageStore. It keeps the records and
// the two daily rollups a SQL store keeps, and reads reports from the
// rollups as it does, so the two agree on what a rollup decides (a
// conversation's day is charged to the person of its first call). Times
// are kept in whole milliseconds. The zero value is empty and ready.
type UsageStore struct {
	// Names gives a report's labels: the name of a person, agent,
	// provider or conversation by id (a SQL store reads them from their
	// tables). Set it before use; an id it lacks has the label "".
	Names map[string]string

	mu       sync.Mutex
	records  []domain.UsageRecord
	daily    map[usageDailyKey]*usageDaily
	sessions map[[2]string]*usageSessionDay // by day, session
	prices   []domain.Price
	budgets  []domain.Budget // oldest first
}

var _ ports.UsageStore = (*UsageStore)(nil)

type usageDailyKey struct{ day, user, agent, provider, model string }

type usageDaily struct {
	providerType string
	totals       domain.UsageTotals
}

type usageSessionDay struct {
	user   string
	totals domain.UsageTotals
}

// RecordUsage implements ports.UsageStore.
func (s *UsageStore) RecordUsage(ctx context.Context, rec domain.UsageRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		if r.ID == rec.ID {
			return errs.E(errs.Conflict, "usage record %s already exists", rec.ID)
		}
	}
	rec.At = storedTime(rec.At)
	s.records = append(s.records, rec)
	day := domain.UsageDay(rec.At)
	if s.daily == nil {
		s.daily, s.sessions = map[usageDailyKey]*usageDaily{}, map[[2]string]*usageSessionDay{}
	}
	k := usageDailyKey{day, rec.UserID, rec.AgentID, rec.ProviderID, rec.Model}
	d := s.daily[k]
	if d == nil {
		d = &usageDaily{providerType: rec.ProviderType}
		s.daily[k] = d
	}
	d.totals.Add(rec)
	if rec.SessionID != "" {
		sd := s.sessions[[2]string{day, rec.SessionID}]
		if sd == nil {
			sd = &usageSessionDay{user: rec.UserID}
			s.sessions[[2]string{day, rec.SessionID}] = sd
		}
		sd.totals.Add(rec)
	}
	return nil
}

// UsageReport implements ports.UsageStore.
func (s *UsageStore) UsageReport(ctx context.Context, q ports.UsageQuery) (ports.UsageReport, error) {
	if err := ctx.Err(); err != nil {
		return ports.UsageReport{}, err
	}
	if !slices.Contains(ports.UsageGroups, q.GroupBy) {
		return ports.UsageReport{}, errs.Field("group_by", "%q is not a grouping: use person, agent, provider, model, day or conversation", q.GroupBy)
	}
	from, to, err := usageDays(q.FromDay, q.ToDay)
	if err != nil {
		return ports.UsageReport{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	groups := map[string]*ports.UsageRow{}
	add := func(key, label string, t domain.UsageTotals) {
		g := groups[key]
		if g == nil {
			g = &ports.UsageRow{Key: key, Label: label}
			groups[key] = g
		}
		g.UsageTotals = g.UsageTotals.Plus(t)
	}
	if q.GroupBy == ports.GroupConversation {
		for k, sd := range s.sessions {
			if k[0] >= from && k[0] <= to && (q.Filter.UserID == "" || sd.user == q.Filter.UserID) {
				add(k[1], s.Names[k[1]], sd.totals)
			}
		}
	} else {
		for k, d := range s.daily {
			f := q.Filter
			if k.day < from || k.day > to || (f.UserID != "" && k.user != f.UserID) ||
				(f.AgentID != "" && k.agent != f.AgentID) || (f.ProviderID != "" && k.provider != f.ProviderID) {
				continue
			}
			switch q.GroupBy {
			case ports.GroupPerson:
				add(k.user, s.Names[k.user], d.totals)
			case ports.GroupAgent:
				add(k.agent, s.Names[k.agent], d.totals)
			case ports.GroupProvider:
				add(k.provider, s.Names[k.provider], d.totals)
			case ports.GroupModel:
				add(d.providerType+"/"+k.model, k.model, d.totals)
			case ports.GroupDay:
				add(k.day, k.day, d.totals)
			}
		}
	}
	out := ports.UsageReport{Rows: []ports.UsageRow{}}
	for _, g := range groups {
		out.Totals = out.Totals.Plus(g.UsageTotals)
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
	return out, nil
}

// UsageTotals implements ports.UsageStore.
func (s *UsageStore) UsageTotals(ctx context.Context, f ports.UsageFilter, fromDay, toDay string) (domain.UsageTotals, error) {
	var t domain.UsageTotals
	if err := ctx.Err(); err != nil {
		return t, err
	}
	from, to, err := usageDays(fromDay, toDay)
	if err != nil {
		return t, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, d := range s.daily {
		if k.day >= from && k.day <= to && (f.UserID == "" || k.user == f.UserID) &&
			(f.AgentID == "" || k.agent == f.AgentID) && (f.ProviderID == "" || k.provider == f.ProviderID) {
			t = t.Plus(d.totals)
		}
	}
	return t, nil
}

// RunUsage implements ports.UsageStore.
func (s *UsageStore) RunUsage(ctx context.Context, runID string) (domain.UsageTotals, error) {
	return s.sumRecords(ctx, func(r domain.UsageRecord) bool { return r.RunID == runID })
}

// SessionUsage implements ports.UsageStore.
func (s *UsageStore) SessionUsage(ctx context.Context, sessionID string) (domain.UsageTotals, error) {
	return s.sumRecords(ctx, func(r domain.UsageRecord) bool { return sessionID != "" && r.SessionID == sessionID })
}

// SessionRunsUsage implements ports.UsageStore.
func (s *UsageStore) SessionRunsUsage(ctx context.Context, sessionID string) (map[string]domain.UsageTotals, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]domain.UsageTotals{}
	for _, r := range s.records {
		if sessionID != "" && r.SessionID == sessionID {
			t := out[r.RunID]
			t.Add(r)
			out[r.RunID] = t
		}
	}
	return out, nil
}

func (s *UsageStore) sumRecords(ctx context.Context, match func(domain.UsageRecord) bool) (domain.UsageTotals, error) {
	var t domain.UsageTotals
	if err := ctx.Err(); err != nil {
		return t, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		if match(r) {
			t.Add(r)
		}
	}
	return t, nil
}

// ListUsage implements ports.UsageStore.
func (s *UsageStore) ListUsage(ctx context.Context, q ports.UsageListQuery) ([]domain.UsageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	from, to, err := usageDays(q.FromDay, q.ToDay)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs := slices.Clone(s.records)
	slices.SortFunc(recs, func(a, b domain.UsageRecord) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID))
	})
	start := 0
	if q.AfterID != "" {
		i := slices.IndexFunc(recs, func(r domain.UsageRecord) bool { return r.ID == q.AfterID })
		if i < 0 {
			return nil, errs.Field("after_id", "no usage record has this id; start the export again without it")
		}
		start = i + 1
	}
	out := []domain.UsageRecord{}
	for _, r := range recs[start:] {
		f, day := q.Filter, domain.UsageDay(r.At)
		if day >= from && day <= to && (f.UserID == "" || r.UserID == f.UserID) &&
			(f.AgentID == "" || r.AgentID == f.AgentID) && (f.ProviderID == "" || r.ProviderID == f.ProviderID) {
			out = append(out, r)
			if len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}

// usageDays checks a range of days (inclusive, YYYY-MM-DD, "" for an open
// end) and returns bounds a day compares to as text.
func usageDays(fromDay, toDay string) (from, to string, err error) {
	from, to = "0000-01-01", "9999-12-31"
	for _, d := range []struct{ field, v string }{{"from", fromDay}, {"to", toDay}} {
		if d.v == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, d.v); err != nil {
			return "", "", errs.Field(d.field, "%q is not a day: write it as YYYY-MM-DD", d.v)
		}
	}
	if fromDay != "" {
		from = fromDay
	}
	if toDay != "" {
		to = toDay
	}
	return from, to, nil
}

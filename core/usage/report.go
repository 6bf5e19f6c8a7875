package usage

import (
	"context"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ReportQuery is a report as a caller asks for it: days as YYYY-MM-DD
// ("" for the defaults: the last 30 days to today, UTC), a grouping (""
// for by day), filters, and at most Limit groups (0: all).
type ReportQuery struct {
	From, To string
	GroupBy  string
	Filter   ports.UsageFilter
	Limit    int
}

// Report is a report with the days it covers.
type Report struct {
	From, To string
	GroupBy  ports.UsageGroup
	ports.UsageReport
}

// MaxReportDays bounds a report's range: ten years of days.
const MaxReportDays = 3660

// MaxReportLimit bounds a report's groups.
const MaxReportLimit = 1000

// defaultReportDays is the range a report covers when it names none.
const defaultReportDays = 30

// Report sums the team's usage (admins).
func (s *Service) Report(ctx context.Context, p domain.Principal, q ReportQuery) (Report, error) {
	if err := p.RequireAdmin(); err != nil {
		return Report{}, err
	}
	return s.report(ctx, q)
}

// Mine sums the caller's own usage: the person filter is theirs, and a
// grouping by person is refused.
func (s *Service) Mine(ctx context.Context, p domain.Principal, q ReportQuery) (Report, error) {
	if q.GroupBy == string(ports.GroupPerson) {
		return Report{}, errs.Field("group_by", "your own usage has one person: group by agent, provider, model, day or conversation")
	}
	q.Filter.UserID = p.User.ID
	return s.report(ctx, q)
}

func (s *Service) report(ctx context.Context, q ReportQuery) (Report, error) {
	from, to, f := s.days(q.From, q.To)
	group := ports.UsageGroup(q.GroupBy)
	if group == "" {
		group = ports.GroupDay
	}
	if !slices.Contains(ports.UsageGroups, group) {
		f.Add("group_by", "must be person, agent, provider, model, day or conversation")
	}
	if q.Limit < 0 || q.Limit > MaxReportLimit {
		f.Add("limit", "must be from 1 to 1000 groups (none: every group)")
	}
	if err := f.Err(); err != nil {
		return Report{}, err
	}
	r, err := s.d.Store.UsageReport(ctx, ports.UsageQuery{FromDay: from, ToDay: to, Filter: q.Filter, GroupBy: group, Limit: q.Limit})
	if r.Rows == nil {
		r.Rows = []ports.UsageRow{}
	}
	return Report{From: from, To: to, GroupBy: group, UsageReport: r}, err
}

// days reads a range of days, defaulting to the last 30 to today.
func (s *Service) days(from, to string) (string, string, *errs.FieldErrors) {
	f := &errs.FieldErrors{}
	today := s.d.Clock.Now().UTC().Truncate(24 * time.Hour)
	end, start := today, today.AddDate(0, 0, -(defaultReportDays-1))
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			f.Add("to", "must be a day like 2026-12-01")
		}
		end = t
		if from == "" {
			start = end.AddDate(0, 0, -(defaultReportDays - 1))
		}
	}
	if from != "" {
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			f.Add("from", "must be a day like 2026-12-01")
		}
		start = t
	}
	if f.Err() == nil {
		switch {
		case start.After(end):
			f.Add("from", "must not be after to")
		case end.Sub(start) >= MaxReportDays*24*time.Hour:
			f.Add("from", "a report covers at most 3660 days")
		}
	}
	return domain.UsageDay(start), domain.UsageDay(end), f
}

// Export pages the calls a range selects, in time order, for a CSV
// export: the team's (admins) or, mine set, the caller's own. each is
// called per page until it fails or the calls end.
func (s *Service) Export(ctx context.Context, p domain.Principal, mine bool, q ReportQuery, each func([]domain.UsageRecord) error) error {
	if mine {
		q.Filter.UserID = p.User.ID
	} else if err := p.RequireAdmin(); err != nil {
		return err
	}
	from, to, f := s.days(q.From, q.To)
	if err := f.Err(); err != nil {
		return err
	}
	after := ""
	for {
		page, err := s.d.Store.ListUsage(ctx, ports.UsageListQuery{FromDay: from, ToDay: to, Filter: q.Filter, AfterID: after, Limit: exportPage})
		if err != nil || len(page) == 0 {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
		if len(page) < exportPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// exportPage is how many calls an export reads at a time.
const exportPage = 1000

// RunUsage sums the calls of one of the caller's runs; anyone else's is
// not_found, as the run is.
func (s *Service) RunUsage(ctx context.Context, p domain.Principal, runID string) (domain.UsageTotals, error) {
	run, err := s.d.Conversations.FindRun(ctx, runID)
	if err == nil {
		err = run.CheckOwner(p)
	}
	if err != nil {
		return domain.UsageTotals{}, err
	}
	return s.d.Store.RunUsage(ctx, runID)
}

// SessionUsage sums the calls of one of the caller's conversations;
// anyone else's is not_found, as the conversation is.
func (s *Service) SessionUsage(ctx context.Context, p domain.Principal, sessionID string) (domain.UsageTotals, error) {
	if err := s.owns(ctx, p, sessionID); err != nil {
		return domain.UsageTotals{}, err
	}
	return s.d.Store.SessionUsage(ctx, sessionID)
}

// SessionRunsUsage sums the calls of one of the caller's conversations
// run by run (keyed by run id), as SessionUsage.
func (s *Service) SessionRunsUsage(ctx context.Context, p domain.Principal, sessionID string) (map[string]domain.UsageTotals, error) {
	if err := s.owns(ctx, p, sessionID); err != nil {
		return nil, err
	}
	return s.d.Store.SessionRunsUsage(ctx, sessionID)
}

// owns refuses a conversation that is not the caller's (not_found).
func (s *Service) owns(ctx context.Context, p domain.Principal, sessionID string) error {
	sess, err := s.d.Conversations.FindSession(ctx, sessionID)
	if err != nil {
		return err
	}
	return sess.CheckContent(p)
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Usage: one record per model call and its two daily rollups, written in
// one transaction, so a report (which reads the rollups alone) always
// agrees with the records.

const usageRecordColumns = `id, at, user_id, agent_id, provider_id, provider_type, model, session_id, run_id, task_id, kind,
	outcome, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost_micros, priced`

// rollupColumns are the sums a rollup row keeps, in domain.UsageTotals'
// order.
const rollupColumns = `calls, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, cost_micros, unpriced_calls`

// rollupSums sums the rollup rows a query selects. The casts are for
// Postgres, whose SUM of a BIGINT is a NUMERIC.
const rollupSums = `CAST(COALESCE(SUM(calls), 0) AS BIGINT), CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(cached_input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(reasoning_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cost_micros), 0) AS BIGINT),
	CAST(COALESCE(SUM(unpriced_calls), 0) AS BIGINT)`

// recordSums sums records as a rollup does: an unpriced call's cost is
// not counted, the call is.
const recordSums = `COUNT(*), CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(cached_input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(reasoning_tokens), 0) AS BIGINT),
	CAST(COALESCE(SUM(CASE WHEN priced = 1 THEN cost_micros ELSE 0 END), 0) AS BIGINT),
	CAST(COALESCE(SUM(1 - priced), 0) AS BIGINT)`

// The rollups' upserts: a day's first call of a group inserts its row,
// the next ones add to it.
var (
	upsertUsageDaily = `INSERT INTO usage_daily (day, user_id, agent_id, provider_id, provider_type, model, ` + rollupColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (day, user_id, agent_id, provider_id, model) DO UPDATE SET ` + rollupAdd("usage_daily")
	upsertUsageSessionDaily = `INSERT INTO usage_session_daily (day, session_id, user_id, ` + rollupColumns + `)
	VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (day, session_id) DO UPDATE SET ` + rollupAdd("usage_session_daily")
)

// rollupAdd adds the call being inserted to table's row. The row's
// columns are named with the table: Postgres finds a bare name ambiguous.
func rollupAdd(table string) string {
	var set []string
	for _, c := range strings.Split(rollupColumns, ", ") {
		set = append(set, c+" = "+table+"."+c+" + excluded."+c)
	}
	return strings.Join(set, ", ")
}

func scanTotals(r rowScanner, extra ...any) (domain.UsageTotals, error) {
	var t domain.UsageTotals
	err := r.Scan(append(extra, &t.Calls, &t.InputTokens, &t.CachedInputTokens, &t.OutputTokens, &t.ReasoningTokens,
		&t.CostMicros, &t.UnpricedCalls)...)
	return t, err
}

func scanUsageRecord(r rowScanner) (domain.UsageRecord, error) {
	var u domain.UsageRecord
	var at int64
	var kind string
	err := r.Scan(&u.ID, &at, &u.UserID, &u.AgentID, &u.ProviderID, &u.ProviderType, &u.Model, &u.SessionID, &u.RunID,
		&u.TaskID, &kind, &u.Outcome, &u.InputTokens, &u.CachedInputTokens, &u.OutputTokens, &u.ReasoningTokens,
		&u.CostMicros, &u.Priced)
	u.At, u.Kind = fromMS(at), domain.UsageKind(kind)
	return u, err
}

// RecordUsage implements ports.UsageStore.
func (db *DB) RecordUsage(ctx context.Context, rec domain.UsageRecord) error {
	day := domain.UsageDay(rec.At)
	// What the rollups add: an unpriced call counts as such, its cost not.
	cost, unpriced := rec.CostMicros, int64(0)
	if !rec.Priced {
		cost, unpriced = 0, 1
	}
	return db.tx(ctx, func(t txQ) error {
		if _, err := t.ExecContext(ctx, `INSERT INTO usage_records (`+usageRecordColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, ms(rec.At), rec.UserID, rec.AgentID, rec.ProviderID, rec.ProviderType, rec.Model, rec.SessionID,
			rec.RunID, rec.TaskID, string(rec.Kind), rec.Outcome, rec.InputTokens, rec.CachedInputTokens,
			rec.OutputTokens, rec.ReasoningTokens, rec.CostMicros, rec.Priced); err != nil {
			return translate(err)
		}
		if _, err := t.ExecContext(ctx, upsertUsageDaily, day, rec.UserID, rec.AgentID, rec.ProviderID, rec.ProviderType,
			rec.Model, rec.InputTokens, rec.CachedInputTokens, rec.OutputTokens, rec.ReasoningTokens, cost, unpriced); err != nil {
			return translate(err)
		}
		if rec.SessionID == "" {
			return nil // a call outside a conversation is in no conversation's sums
		}
		_, err := t.ExecContext(ctx, upsertUsageSessionDaily, day, rec.SessionID, rec.UserID, rec.InputTokens,
			rec.CachedInputTokens, rec.OutputTokens, rec.ReasoningTokens, cost, unpriced)
		return translate(err)
	})
}

// UsageTotals implements ports.UsageStore.
func (db *DB) UsageTotals(ctx context.Context, f ports.UsageFilter, fromDay, toDay string) (domain.UsageTotals, error) {
	from, to, err := usageDays(fromDay, toDay)
	if err != nil {
		return domain.UsageTotals{}, err
	}
	where, args := usageFilter(f, "day >= ? AND day <= ?", from, to)
	t, err := scanTotals(db.read.QueryRowContext(ctx, `SELECT `+rollupSums+` FROM usage_daily WHERE `+where, args...))
	return t, translate(err)
}

// RunUsage implements ports.UsageStore.
func (db *DB) RunUsage(ctx context.Context, runID string) (domain.UsageTotals, error) {
	t, err := scanTotals(db.read.QueryRowContext(ctx, `SELECT `+recordSums+` FROM usage_records WHERE run_id = ?`, runID))
	return t, translate(err)
}

// SessionUsage implements ports.UsageStore. It reads the conversation's
// rollup, a row per day it was used on, which sums the same records.
func (db *DB) SessionUsage(ctx context.Context, sessionID string) (domain.UsageTotals, error) {
	t, err := scanTotals(db.read.QueryRowContext(ctx, `SELECT `+rollupSums+` FROM usage_session_daily WHERE session_id = ?`,
		sessionID))
	return t, translate(err)
}

// SessionRunsUsage implements ports.UsageStore: the conversation's
// records through their index, summed by run.
func (db *DB) SessionRunsUsage(ctx context.Context, sessionID string) (map[string]domain.UsageTotals, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT run_id, `+recordSums+` FROM usage_records WHERE session_id = ? GROUP BY run_id`, sessionID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]domain.UsageTotals{}
	for rows.Next() {
		var run string
		t, err := scanTotals(rows, &run)
		if err != nil {
			return nil, translate(err)
		}
		out[run] = t
	}
	return out, translate(rows.Err())
}

// ListUsage implements ports.UsageStore. A cursor naming no record is a
// validation error: an export that silently ended there would lie.
func (db *DB) ListUsage(ctx context.Context, q ports.UsageListQuery) ([]domain.UsageRecord, error) {
	from, to, err := usageSpan(q.FromDay, q.ToDay)
	if err != nil {
		return nil, err
	}
	where, args := usageFilter(q.Filter, "at >= ? AND at < ?", from, to)
	if q.AfterID != "" {
		var at int64
		err := db.read.QueryRowContext(ctx, `SELECT at FROM usage_records WHERE id = ?`, q.AfterID).Scan(&at)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errs.Field("after_id", "no usage record has this id; start the export again without it")
		}
		if err != nil {
			return nil, translate(err)
		}
		// After (at, id): the first term bounds the index range.
		where += ` AND at >= ? AND (at > ? OR id > ?)`
		args = append(args, at, at, q.AfterID)
	}
	query := `SELECT ` + usageRecordColumns + ` FROM usage_records WHERE ` + where + ` ORDER BY at, id`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	return collect(ctx, db.read, scanUsageRecord, query, args...)
}

// usageFilter is the condition selecting what f names, after cond (whose
// arguments are args).
func usageFilter(f ports.UsageFilter, cond string, args ...any) (string, []any) {
	where := []string{cond}
	for _, c := range []struct{ col, v string }{{"user_id", f.UserID}, {"agent_id", f.AgentID}, {"provider_id", f.ProviderID}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	return strings.Join(where, " AND "), args
}

// usageDays checks a range of days (YYYY-MM-DD, inclusive; "" leaves that
// end open) and returns it as the bounds a rollup's day compares to.
func usageDays(fromDay, toDay string) (from, to string, err error) {
	lo, hi, err := parseUsageDays(fromDay, toDay)
	if err != nil {
		return "", "", err
	}
	from, to = "0000-01-01", "9999-12-31"
	if !lo.IsZero() {
		from = fromDay
	}
	if !hi.IsZero() {
		to = toDay
	}
	return from, to, nil
}

// usageSpan is the range of days as a record's at compares to: from the
// first instant of fromDay to (excluding) the first of the day after toDay.
func usageSpan(fromDay, toDay string) (from, to int64, err error) {
	lo, hi, err := parseUsageDays(fromDay, toDay)
	if err != nil {
		return 0, 0, err
	}
	from, to = -1<<62, 1<<62
	if !lo.IsZero() {
		from = ms(lo)
	}
	if !hi.IsZero() {
		to = ms(hi.AddDate(0, 0, 1))
	}
	return from, to, nil
}

// parseUsageDays reads the days of a range (zero for an open end).
func parseUsageDays(fromDay, toDay string) (from, to time.Time, err error) {
	for _, d := range []struct {
		field, v string
		t        *time.Time
	}{{"from", fromDay, &from}, {"to", toDay, &to}} {
		if d.v == "" {
			continue
		}
		if *d.t, err = time.Parse(time.DateOnly, d.v); err != nil {
			return from, to, errs.Field(d.field, "%q is not a day: write it as YYYY-MM-DD", d.v)
		}
	}
	return from, to, nil
}

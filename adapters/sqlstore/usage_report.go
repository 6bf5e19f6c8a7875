package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// usageGrouping is how one report grouping reads the rollups.
type usageGrouping struct {
	table string // the rollup it reads
	key   string // the group's key, over the rollup's columns
	label string // its label, when the rollup holds it ('' otherwise)
	group string // the GROUP BY columns
	// inOrder is the SQLite index holding the rollup's sums in the
	// group's order (see UsageReport); "" when the table is (by day).
	inOrder string
	// names, when set, is the table the label is read from (by id = key)
	// and its name column: a LEFT JOIN, so a deleted one's label is "".
	names, nameCol string
}

var usageGroupings = map[ports.UsageGroup]usageGrouping{
	ports.GroupPerson: {table: "usage_daily", key: "user_id", label: "''", group: "user_id", inOrder: "usage_daily_user",
		names: "users", nameCol: "username"},
	ports.GroupAgent: {table: "usage_daily", key: "agent_id", label: "''", group: "agent_id", inOrder: "usage_daily_agent",
		names: "agents", nameCol: "name"},
	ports.GroupProvider: {table: "usage_daily", key: "provider_id", label: "''", group: "provider_id",
		inOrder: "usage_daily_provider", names: "providers", nameCol: "name"},
	ports.GroupModel: {table: "usage_daily", key: "provider_type || '/' || model", label: "model",
		group: "provider_type, model", inOrder: "usage_daily_model"},
	ports.GroupDay: {table: "usage_daily", key: "day", label: "day", group: "day"},
	ports.GroupConversation: {table: "usage_session_daily", key: "session_id", label: "''", group: "session_id",
		inOrder: "usage_session_daily_session", names: "sessions", nameCol: "name"},
}

// groupSums are a group's sums, named for the ordering. A total over no
// row (Postgres's grand total of an empty selection) is 0.
const groupSums = `CAST(COALESCE(SUM(calls), 0) AS BIGINT) AS calls,
	CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input_tokens,
	CAST(COALESCE(SUM(cached_input_tokens), 0) AS BIGINT) AS cached_input_tokens,
	CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS output_tokens,
	CAST(COALESCE(SUM(reasoning_tokens), 0) AS BIGINT) AS reasoning_tokens,
	CAST(COALESCE(SUM(cost_micros), 0) AS BIGINT) AS cost_micros,
	CAST(COALESCE(SUM(unpriced_calls), 0) AS BIGINT) AS unpriced_calls,
	CAST(COALESCE(SUM(input_tokens + output_tokens), 0) AS BIGINT) AS tokens`

// UsageReport implements ports.UsageStore. The groups are summed, ordered
// and cut to the limit in one statement, which joins names onto the
// groups kept alone. When the limit cut some, the totals are summed apart:
// on Postgres in the same pass (a grouping set of everything, ordered
// first); on SQLite, which has no grouping sets, by a second statement in
// the same snapshot.
//
// On SQLite a report over most of the stored days reads the rollup in the
// group's order, from an index that holds the sums: sorting the rows into
// groups otherwise costs more than reading them (a year of a team's
// rollups is tens of thousands of rows). A short range, or a filter, reads
// just its rows, by day or by the filter's index.
func (db *DB) UsageReport(ctx context.Context, q ports.UsageQuery) (ports.UsageReport, error) {
	g, ok := usageGroupings[q.GroupBy]
	if !ok {
		return ports.UsageReport{}, errs.Field("group_by", "%q is not a grouping: use person, agent, provider, model, day or conversation", q.GroupBy)
	}
	from, to, err := usageDays(q.FromDay, q.ToDay)
	if err != nil {
		return ports.UsageReport{}, err
	}
	f := q.Filter
	if q.GroupBy == ports.GroupConversation {
		f = ports.UsageFilter{UserID: f.UserID} // its rollup knows the person alone
	}
	where, args := usageFilter(f, "day >= ? AND day <= ?", from, to)
	onePass := q.Limit > 0 && db.dialect != sqliteDialect
	out := ports.UsageReport{Rows: []ports.UsageRow{}}
	err = db.snapshot(ctx, func(t txQ) error {
		source := g.table
		if g.inOrder != "" && f == (ports.UsageFilter{}) && db.dialect == sqliteDialect {
			most, err := coversMostDays(ctx, t, g.table, from, to)
			if err != nil {
				return err
			}
			if most {
				source += ` INDEXED BY ` + g.inOrder
			}
		}
		groupArgs := args
		switch {
		case onePass:
			groupArgs = append(args[:len(args):len(args)], q.Limit+1)
		case q.Limit > 0:
			groupArgs = append(args[:len(args):len(args)], q.Limit)
		}
		rows, err := queryToEnd(ctx, t, g.statement(source, where, q.GroupBy == ports.GroupDay, q.Limit > 0, onePass), groupArgs...)
		if err != nil {
			return translate(err)
		}
		defer rows.Close()
		for rows.Next() {
			var r ports.UsageRow
			var whole int64
			if r.UsageTotals, err = scanTotals(rows, &whole, &r.Key, &r.Label); err != nil {
				return translate(err)
			}
			if whole != 0 {
				out.Totals = r.UsageTotals
				continue
			}
			out.Rows = append(out.Rows, r)
		}
		if err := rows.Close(); err != nil {
			return translate(err)
		}
		switch {
		case onePass:
		case q.Limit <= 0 || len(out.Rows) < q.Limit:
			for _, r := range out.Rows {
				out.Totals = out.Totals.Plus(r.UsageTotals)
			}
		default:
			out.Totals, err = scanTotals(t.QueryRowContext(ctx, `SELECT `+rollupSums+` FROM `+g.table+` WHERE `+where, args...))
		}
		return translate(err)
	})
	if err != nil {
		return ports.UsageReport{}, err
	}
	return out, nil
}

// statement is the query of a report's groups from source (the rollup,
// maybe with an index hint) where the condition holds: each row a flag
// (not 0 for the totals, 0 for a group), the key, the label and the sums,
// in the report's order. limited: its last argument is the most groups it
// returns (plus one, the totals' row, onePass). onePass adds the totals of
// every group as a grouping set, ordered first.
func (g usageGrouping) statement(source, where string, byDay, limited, onePass bool) string {
	order := "cost_micros DESC, tokens DESC, k"
	if byDay {
		order = "k"
	}
	whole, groupBy := "0", g.group
	if onePass {
		whole, groupBy, order = "GROUPING("+g.group+")", "GROUPING SETS (("+g.group+"), ())", "whole DESC, "+order
	}
	inner := `SELECT ` + whole + ` AS whole, ` + g.key + ` AS k, ` + g.label + ` AS label, ` + groupSums + ` FROM ` + source +
		` WHERE ` + where + ` GROUP BY ` + groupBy + ` ORDER BY ` + order
	if limited {
		inner += ` LIMIT ?`
	}
	label, join := "COALESCE(g.label, '')", ""
	if g.names != "" {
		label, join = "COALESCE(n."+g.nameCol+", '')", ` LEFT JOIN `+g.names+` n ON n.id = g.k`
	}
	return `WITH g AS (` + inner + `) SELECT g.whole, COALESCE(g.k, ''), ` + label + `, g.calls, g.input_tokens,
		g.cached_input_tokens, g.output_tokens, g.reasoning_tokens, g.cost_micros, g.unpriced_calls FROM g` + join + `
		ORDER BY g.` + strings.ReplaceAll(order, ", ", ", g.")
}

// coversMostDays reports whether the days from..to span at least half of
// the days table holds rollups of.
func coversMostDays(ctx context.Context, t txQ, table, from, to string) (bool, error) {
	var first, last *string
	if err := t.QueryRowContext(ctx, `SELECT (SELECT MIN(day) FROM `+table+`), (SELECT MAX(day) FROM `+table+`)`).Scan(&first,
		&last); err != nil {
		return false, translate(err)
	}
	if first == nil || last == nil {
		return false, nil
	}
	span := func(a, b string) float64 {
		ta, _ := time.Parse(time.DateOnly, a)
		tb, _ := time.Parse(time.DateOnly, b)
		return tb.Sub(ta).Hours()/24 + 1
	}
	lo, hi := max(from, *first), min(to, *last)
	return lo <= hi && span(lo, hi) >= span(*first, *last)/2, nil
}

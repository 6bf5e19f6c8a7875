package sqlstore

import (
	"context"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// usageGrouping is how one report grouping reads the rollups.
type usageGrouping struct {
	table string // the rollup it reads
	key   string // the group's key, over the rollup's columns
	label string // its label, when the rollup holds it ('' otherwise)
	group string // the GROUP BY columns
	// names, when set, is the table the label is read from (by id = key)
	// and its name column: a LEFT JOIN, so a deleted one's label is "".
	names, nameCol string
}

var usageGroupings = map[ports.UsageGroup]usageGrouping{
	ports.GroupPerson:   {table: "usage_daily", key: "user_id", label: "''", group: "user_id", names: "users", nameCol: "username"},
	ports.GroupAgent:    {table: "usage_daily", key: "agent_id", label: "''", group: "agent_id", names: "agents", nameCol: "name"},
	ports.GroupProvider: {table: "usage_daily", key: "provider_id", label: "''", group: "provider_id", names: "providers", nameCol: "name"},
	ports.GroupModel: {table: "usage_daily", key: "provider_type || '/' || model", label: "model",
		group: "provider_type, model"},
	ports.GroupDay: {table: "usage_daily", key: "day", label: "day", group: "day"},
	ports.GroupConversation: {table: "usage_session_daily", key: "session_id", label: "''", group: "session_id",
		names: "sessions", nameCol: "name"},
}

// groupTotals are a group's sums, named for the ordering, then the sums
// of every group the query selected (a window over the groups, computed
// before the limit keeps the largest).
const groupTotals = `CAST(SUM(calls) AS BIGINT) AS calls, CAST(SUM(input_tokens) AS BIGINT) AS input_tokens,
	CAST(SUM(cached_input_tokens) AS BIGINT) AS cached_input_tokens, CAST(SUM(output_tokens) AS BIGINT) AS output_tokens,
	CAST(SUM(reasoning_tokens) AS BIGINT) AS reasoning_tokens, CAST(SUM(cost_micros) AS BIGINT) AS cost_micros,
	CAST(SUM(unpriced_calls) AS BIGINT) AS unpriced_calls,
	CAST(SUM(input_tokens + output_tokens) AS BIGINT) AS tokens,
	CAST(SUM(SUM(calls)) OVER () AS BIGINT) AS all_calls, CAST(SUM(SUM(input_tokens)) OVER () AS BIGINT) AS all_input,
	CAST(SUM(SUM(cached_input_tokens)) OVER () AS BIGINT) AS all_cached,
	CAST(SUM(SUM(output_tokens)) OVER () AS BIGINT) AS all_output,
	CAST(SUM(SUM(reasoning_tokens)) OVER () AS BIGINT) AS all_reasoning,
	CAST(SUM(SUM(cost_micros)) OVER () AS BIGINT) AS all_cost,
	CAST(SUM(SUM(unpriced_calls)) OVER () AS BIGINT) AS all_unpriced`

// UsageReport implements ports.UsageStore. One statement: the groups are
// summed, ordered and cut to the limit in a CTE, and only the groups kept
// are joined to their names.
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
	order, outer := "cost_micros DESC, tokens DESC, k", "g.cost_micros DESC, g.tokens DESC, g.k"
	if q.GroupBy == ports.GroupDay {
		order, outer = "k", "g.k"
	}
	inner := `SELECT ` + g.key + ` AS k, ` + g.label + ` AS label, ` + groupTotals + ` FROM ` + g.table + ` WHERE ` + where +
		` GROUP BY ` + g.group + ` ORDER BY ` + order
	if q.Limit > 0 {
		inner += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	label, join := "g.label", ""
	if g.names != "" {
		label, join = "COALESCE(n."+g.nameCol+", '')", ` LEFT JOIN `+g.names+` n ON n.id = g.k`
	}
	rows, err := db.read.QueryContext(ctx, `WITH g AS (`+inner+`) SELECT g.k, `+label+`,
		g.calls, g.input_tokens, g.cached_input_tokens, g.output_tokens, g.reasoning_tokens, g.cost_micros, g.unpriced_calls,
		g.all_calls, g.all_input, g.all_cached, g.all_output, g.all_reasoning, g.all_cost, g.all_unpriced
		FROM g`+join+` ORDER BY `+outer, args...)
	if err != nil {
		return ports.UsageReport{}, translate(err)
	}
	defer rows.Close()
	out := ports.UsageReport{Rows: []ports.UsageRow{}}
	for rows.Next() {
		var r ports.UsageRow
		t := &out.Totals
		if err := rows.Scan(&r.Key, &r.Label, &r.Calls, &r.InputTokens, &r.CachedInputTokens, &r.OutputTokens,
			&r.ReasoningTokens, &r.CostMicros, &r.UnpricedCalls, &t.Calls, &t.InputTokens, &t.CachedInputTokens,
			&t.OutputTokens, &t.ReasoningTokens, &t.CostMicros, &t.UnpricedCalls); err != nil {
			return ports.UsageReport{}, translate(err)
		}
		out.Rows = append(out.Rows, r)
	}
	return out, translate(rows.Err())
}

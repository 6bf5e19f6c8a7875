package sqlstore

import (
	"context"
)

// StatusCounts counts runs and tasks by status and the approvals waiting
// for a decision, for metrics: three small aggregate reads on the pool.
func (db *DB) StatusCounts(ctx context.Context) (runs map[string]int64, approvalsWaiting int64, tasks map[string]int64, err error) {
	if runs, err = db.countBy(ctx, `SELECT status, COUNT(*) FROM runs GROUP BY status`); err != nil {
		return nil, 0, nil, err
	}
	if tasks, err = db.countBy(ctx, `SELECT status, COUNT(*) FROM tasks GROUP BY status`); err != nil {
		return nil, 0, nil, err
	}
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE status = 'pending'`).Scan(&approvalsWaiting)
	return runs, approvalsWaiting, tasks, translate(err)
}

// countBy reads (key, count) rows into a map.
func (db *DB) countBy(ctx context.Context, query string) (map[string]int64, error) {
	rows, err := db.read.QueryContext(ctx, query)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, translate(err)
		}
		out[k] = n
	}
	return out, translate(rows.Err())
}

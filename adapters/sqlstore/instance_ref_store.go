package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// SwapInstanceRef implements ports.InstanceRefStore: one compare-and-swap
// UPDATE, so two replicas racing to record an instance cannot both win.
func (db *DB) SwapInstanceRef(ctx context.Context, projectID, old, next string) (bool, error) {
	swapped := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE projects SET instance_ref = ? WHERE id = ? AND instance_ref = ?`, next, projectID, old)
		if err != nil {
			return translate(err)
		}
		if n, _ := r.RowsAffected(); n > 0 {
			swapped = true
			return nil
		}
		var current string
		err = tx.QueryRowContext(ctx, `SELECT instance_ref FROM projects WHERE id = ?`, projectID).Scan(&current)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("project")
		}
		return translate(err)
	})
	return swapped, err
}

package sqlstore

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// HoldDelivery implements ports.HookDeliveryStore: one statement inserts
// the delivery or takes over its expired row, so of two replicas holding
// one delivery at once the unique key lets exactly one through.
func (db *DB) HoldDelivery(ctx context.Context, d domain.HookDelivery, now time.Time) error {
	held, err := changed(db.exec(ctx, `INSERT INTO hook_deliveries (trigger_id, sent_at, body_sha256, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (trigger_id, sent_at, body_sha256) DO UPDATE SET expires_at = excluded.expires_at
		WHERE hook_deliveries.expires_at < ?`, d.TriggerID, d.Timestamp, d.BodyHash, ms(d.Until), ms(now)))
	if err != nil {
		return err
	}
	if !held {
		return errs.E(errs.Conflict, "the delivery is held already")
	}
	return nil
}

// ReleaseDelivery implements ports.HookDeliveryStore.
func (db *DB) ReleaseDelivery(ctx context.Context, d domain.HookDelivery) error {
	_, err := db.exec(ctx, `DELETE FROM hook_deliveries WHERE trigger_id = ? AND sent_at = ? AND body_sha256 = ?`,
		d.TriggerID, d.Timestamp, d.BodyHash)
	return err
}

// PruneDeliveries implements ports.HookDeliveryStore.
func (db *DB) PruneDeliveries(ctx context.Context, now time.Time) (int, error) {
	r, err := db.exec(ctx, `DELETE FROM hook_deliveries WHERE expires_at < ?`, ms(now))
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

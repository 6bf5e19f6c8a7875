package sqlstore

import (
	"context"
	"time"
)

// Beat implements ports.ReplicaStore.
func (db *DB) Beat(ctx context.Context, replica string, at time.Time) error {
	_, err := db.exec(ctx, `INSERT INTO replicas (id, started_at, seen_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, replica, ms(at), ms(at))
	return err
}

// Leave implements ports.ReplicaStore.
func (db *DB) Leave(ctx context.Context, replica string) error {
	return db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE holder = ?`, replica); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM replicas WHERE id = ?`, replica)
		return translate(err)
	})
}

// ClaimLease implements ports.ReplicaStore: one statement takes a free or
// expired lease, or renews the holder's own.
func (db *DB) ClaimLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	return changed(db.exec(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`, name, holder, ms(now.Add(ttl)), ms(now)))
}

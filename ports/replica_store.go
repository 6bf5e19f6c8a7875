package ports

import (
	"context"
	"time"
)

// ReplicaStore keeps the roll of the server processes (replicas) sharing
// the database, and the leases of the work only one of them may do at a
// time. On a database only one process uses (SQLite) the roll holds that
// process, and every lease is its own.
type ReplicaStore interface {
	// Beat records that replica is alive at at, putting it on the roll
	// on its first beat.
	Beat(ctx context.Context, replica string, at time.Time) error
	// Leave takes replica off the roll (a clean stop) and gives up its
	// leases, so its work is taken over at once.
	Leave(ctx context.Context, replica string) error
	// ClaimLease takes the lease called name for holder until now+ttl, or
	// renews holder's own; false when another holder's lease has not
	// expired at now.
	ClaimLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
}

package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// HookDeliveryStore keeps the webhook deliveries that fired, in the store
// every replica shares: recording one is the replay guard itself, so a
// delivery fires once however many replicas (and restarts) it reaches.
type HookDeliveryStore interface {
	// HoldDelivery records d before it fires. Returns conflict when the
	// same delivery (trigger, timestamp, body hash) is held already and its
	// Until has not passed at now: it fired, or is firing, elsewhere. A
	// held row whose Until has passed is taken over.
	HoldDelivery(ctx context.Context, d domain.HookDelivery, now time.Time) error
	// ReleaseDelivery forgets d, a delivery that started nothing, so it may
	// be sent again; forgetting one not held is no error.
	ReleaseDelivery(ctx context.Context, d domain.HookDelivery) error
	// PruneDeliveries deletes the deliveries whose Until is before now,
	// and says how many.
	PruneDeliveries(ctx context.Context, now time.Time) (int, error)
}

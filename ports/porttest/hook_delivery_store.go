package porttest

import (
	"context"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// HookDeliveryStore is an in-memory ports.HookDeliveryStore. Times are
// compared in whole milliseconds, as a store keeps them. The zero value is
// empty and ready.
type HookDeliveryStore struct {
	mu   sync.Mutex
	held map[deliveryKey]int64 // → Until, UNIX milliseconds
}

// deliveryKey names a delivery as the store's unique row does.
type deliveryKey struct{ trigger, timestamp, body string }

var _ ports.HookDeliveryStore = (*HookDeliveryStore)(nil)

func keyOf(d domain.HookDelivery) deliveryKey {
	return deliveryKey{d.TriggerID, d.Timestamp, d.BodyHash}
}

// HoldDelivery records d; conflict while the same delivery is held and its
// Until has not passed at now.
func (s *HookDeliveryStore) HoldDelivery(ctx context.Context, d domain.HookDelivery, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.held[keyOf(d)]; ok && until >= now.UnixMilli() {
		return errs.E(errs.Conflict, "the delivery is held already")
	}
	if s.held == nil {
		s.held = map[deliveryKey]int64{}
	}
	s.held[keyOf(d)] = d.Until.UnixMilli()
	return nil
}

// ReleaseDelivery forgets d.
func (s *HookDeliveryStore) ReleaseDelivery(ctx context.Context, d domain.HookDelivery) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, keyOf(d))
	return nil
}

// PruneDeliveries deletes the deliveries whose Until is before now.
func (s *HookDeliveryStore) PruneDeliveries(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, until := range s.held {
		if until < now.UnixMilli() {
			delete(s.held, k)
			n++
		}
	}
	return n, nil
}

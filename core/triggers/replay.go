package triggers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// delivery names a webhook delivery for the replay guard: the trigger, the
// timestamp as signed and the body's hash. It is kept past both sides of
// the window, after which a resend is stale anyway. The guard lives in the
// store every replica shares, so neither another replica nor a restart
// opens a gap in it.
func delivery(triggerID, timestamp string, body []byte, now time.Time) domain.HookDelivery {
	sum := sha256.Sum256(body)
	return domain.HookDelivery{TriggerID: triggerID, Timestamp: strings.TrimSpace(timestamp),
		BodyHash: hex.EncodeToString(sum[:]), Until: now.Add(2 * domain.HookWindow)}
}

// release forgets a delivery that started nothing, so it may be resent. A
// failure leaves the delivery refused until it expires, which is logged:
// the sender sees the refusal that came first.
func (s *Service) release(ctx context.Context, d domain.HookDelivery) {
	if err := s.d.Deliveries.ReleaseDelivery(context.WithoutCancel(ctx), d); err != nil {
		s.d.Log.Warn("releasing a webhook delivery that fired nothing failed", "trigger_id", d.TriggerID, "err", err)
	}
}

// PruneDeliveries forgets the webhook deliveries whose window has passed
// (a resend of one is stale anyway), for the periodic upkeep; it says how
// many.
func (s *Service) PruneDeliveries(ctx context.Context) (int, error) {
	return s.d.Deliveries.PruneDeliveries(ctx, s.d.Clock.Now())
}

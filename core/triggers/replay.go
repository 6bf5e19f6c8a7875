package triggers

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// replays remembers the deliveries that fired, for as long as their
// timestamp would still be accepted, so one sent again (a sender's retry, a
// captured request) fires nothing. It lives in memory: a restart inside the
// window is the one gap.
type replays struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // delivery → when it may be forgotten
}

func newReplays() *replays { return &replays{seen: map[[sha256.Size]byte]time.Time{}} }

// deliveryKey identifies a delivery: the trigger, the timestamp and the body.
func deliveryKey(triggerID, timestamp string, body []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(triggerID))
	h.Write([]byte{0})
	h.Write([]byte(timestamp))
	h.Write([]byte{0})
	h.Write(body)
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

// hold reserves a delivery before it fires; false when it fired already (or
// is firing now). The caller lets go of a delivery that fired nothing.
func (r *replays) hold(k [sha256.Size]byte, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, until := range r.seen {
		if now.After(until) {
			delete(r.seen, key)
		}
	}
	if _, ok := r.seen[k]; ok {
		return false
	}
	// Past both sides of the window, a resend is stale anyway.
	r.seen[k] = now.Add(2 * domain.HookWindow)
	return true
}

// release forgets a delivery that started nothing, so it may be resent.
func (r *replays) release(k [sha256.Size]byte) {
	r.mu.Lock()
	delete(r.seen, k)
	r.mu.Unlock()
}

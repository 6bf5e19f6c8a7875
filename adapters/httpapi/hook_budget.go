package httpapi

import (
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// hookBudgets keeps the failed-delivery budget of each webhook per client
// address, apart from the sign-in budget: a sender with a stale secret (or
// a stranger guessing one) spends only its own pair's, so neither the
// address's sign-ins (behind a reverse proxy, a whole team's) nor another
// trigger's deliveries are refused for it.
type hookBudgets struct {
	budget Budget
	mu     sync.Mutex
	pairs  map[hookPair]*hookBucket
	swept  time.Time
}

// hookPair is one trigger (as the URL names it) and one client address.
type hookPair struct{ trigger, ip string }

type hookBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxHookKey bounds the trigger part of a key: the URL's id is whatever a
// stranger sends, and a real one is a 36-character UUID.
const maxHookKey = 64

func newHookBudgets(b Budget) *hookBudgets {
	return &hookBudgets{budget: b, pairs: map[hookPair]*hookBucket{}}
}

func pairOf(trigger, ip string) hookPair {
	if len(trigger) > maxHookKey {
		trigger = trigger[:maxHookKey]
	}
	return hookPair{trigger, ip}
}

// sweep forgets, at most once per peerIdle, the pairs with nothing to
// remember: a bucket full again is a fresh one, and an idle pair goes as
// the limiter's idle addresses do. Only failures make pairs, so the map
// holds the pairs that failed lately.
func (h *hookBudgets) sweep(now time.Time) {
	if now.Sub(h.swept) <= peerIdle {
		return
	}
	for k, b := range h.pairs {
		if now.Sub(b.seen) > peerIdle || b.lim.TokensAt(now) >= float64(b.lim.Burst()) {
			delete(h.pairs, k)
		}
	}
	h.swept = now
}

// check refuses with 429 and Retry-After, before the signature is looked
// at, when the trigger's budget for the request's address is spent.
func (h *hookBudgets) check(c echo.Context, trigger string) error {
	now := time.Now()
	if lim := h.spent(pairOf(trigger, clientIP(c.Request())), now); lim != nil {
		return refuse(c, lim, now, "bad deliveries to this webhook")
	}
	return nil
}

// spend records one bad delivery to trigger from the request's address.
func (h *hookBudgets) spend(c echo.Context, trigger string) {
	h.spendAt(pairOf(trigger, clientIP(c.Request())), time.Now())
}

// spent is the pair's bucket when it holds no token at now, else nil.
func (h *hookBudgets) spent(k hookPair, now time.Time) *rate.Limiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	if b := h.pairs[k]; b != nil && b.lim.TokensAt(now) < 1 {
		return b.lim
	}
	return nil
}

func (h *hookBudgets) spendAt(k hookPair, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep(now)
	b := h.pairs[k]
	if b == nil {
		b = &hookBucket{lim: bucket(h.budget)}
		h.pairs[k] = b
	}
	b.seen = now
	b.lim.AllowN(now, 1)
}

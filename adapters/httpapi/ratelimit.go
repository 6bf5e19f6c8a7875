package httpapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/agents-server/agents-server/core/errs"
)

// Budget is one token bucket: PerSecond refill, Burst capacity.
type Budget struct {
	PerSecond float64
	Burst     int
}

// RateLimits are the per-client-IP budgets of the endpoint classes.
type RateLimits struct {
	Read  Budget // GETs
	Write Budget // state changes
	// AuthFail is spent by every failed authentication (a wrong token, a
	// wrong password); while it is empty, no credential from that address is
	// even checked, so a token cannot be guessed.
	AuthFail Budget
	// Hook is spent by every webhook delivery refused for its signature
	// or timestamp, per trigger and address and apart from AuthFail; while
	// it is empty that pair's deliveries are refused before the signature
	// is checked. Zero takes DefaultRateLimits.Hook.
	Hook Budget
}

// DefaultRateLimits are generous for people and tight for guessers.
var DefaultRateLimits = RateLimits{
	Read:     Budget{PerSecond: 50, Burst: 200},
	Write:    Budget{PerSecond: 10, Burst: 60},
	AuthFail: Budget{PerSecond: 1.0 / 6, Burst: 10}, // ten wrong guesses, then one per 6 s
	Hook:     Budget{PerSecond: 1.0 / 6, Burst: 10}, // per trigger and address, alike
}

// limiter keeps a bucket set per client IP, forgetting idle addresses.
type limiter struct {
	limits RateLimits
	mu     sync.Mutex
	peers  map[string]*peerBuckets
	swept  time.Time
	hooks  *hookBudgets
}

type peerBuckets struct {
	read, write, authFail *rate.Limiter
	seen                  time.Time
}

const peerIdle = 15 * time.Minute

func newLimiter(l RateLimits) *limiter {
	if l.Hook == (Budget{}) {
		l.Hook = DefaultRateLimits.Hook
	}
	return &limiter{limits: l, peers: map[string]*peerBuckets{}, hooks: newHookBudgets(l.Hook)}
}

func bucket(b Budget) *rate.Limiter { return rate.NewLimiter(rate.Limit(b.PerSecond), b.Burst) }

// peer returns the buckets of ip, sweeping idle peers now and then so the
// map cannot grow without bound.
func (l *limiter) peer(ip string, now time.Time) *peerBuckets {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > peerIdle {
		for k, p := range l.peers {
			if now.Sub(p.seen) > peerIdle {
				delete(l.peers, k)
			}
		}
		l.swept = now
	}
	p := l.peers[ip]
	if p == nil {
		p = &peerBuckets{read: bucket(l.limits.Read), write: bucket(l.limits.Write), authFail: bucket(l.limits.AuthFail)}
		l.peers[ip] = p
	}
	p.seen = now
	return p
}

// clientIP is the direct peer's address: forwarding headers are never
// trusted, since any client can write them.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// refuse answers 429 with the wait until the bucket holds a token again.
func refuse(c echo.Context, lim *rate.Limiter, now time.Time, what string) error {
	secs := int(math.Ceil(untilToken(lim, now).Seconds()))
	if secs < 1 {
		secs = 1
	}
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return errs.E(errs.RateLimited, "too many %s from this address; retry in %d s", what, secs)
}

// spend takes one token of r's address's read or write budget; the
// bucket comes back when it held none.
func (l *limiter) spend(r *http.Request, write bool, now time.Time) *rate.Limiter {
	p := l.peer(clientIP(r), now)
	lim := p.read
	if write {
		lim = p.write
	}
	if lim.AllowN(now, 1) {
		return nil
	}
	return lim
}

// take spends one token of the route's class or refuses with 429.
func (l *limiter) take(c echo.Context, class RateClass) error {
	now := time.Now()
	if lim := l.spend(c.Request(), class == ClassWrite, now); lim != nil {
		what := "requests"
		if class == ClassWrite {
			what = "changes"
		}
		return refuse(c, lim, now, what)
	}
	return nil
}

// checkAuthBudget refuses before any credential is checked when the
// address has spent its failed-authentication budget.
func (l *limiter) checkAuthBudget(c echo.Context) error {
	now := time.Now()
	p := l.peer(clientIP(c.Request()), now)
	if p.authFail.TokensAt(now) < 1 {
		return refuse(c, p.authFail, now, "failed sign-in attempts")
	}
	return nil
}

// untilToken is how long lim takes to hold one token again; 0 when it
// holds one now.
func untilToken(lim *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	if lim.Limit() <= 0 {
		return time.Hour // a budget that never refills: say so, not "now"
	}
	return time.Duration(missing / float64(lim.Limit()) * float64(time.Second))
}

// AuthRefused is how long r's address must wait before it may try a
// credential again, having spent its failed-authentication budget; 0 lets
// it try. The WebSocket endpoints, served beside the API, share the budget
// through it and SpendAuthFailure.
func (s *Server) AuthRefused(r *http.Request) time.Duration {
	now := time.Now()
	return untilToken(s.limits.peer(clientIP(r), now).authFail, now)
}

// SpendAuthFailure records one failed authentication from r's address.
func (s *Server) SpendAuthFailure(r *http.Request) {
	now := time.Now()
	s.limits.peer(clientIP(r), now).authFail.AllowN(now, 1)
}

// RequestRefused spends one token of r's address's request budget — the
// read class for GET and HEAD, the write class for anything else, as the
// API's routes do — and says how long to wait when it is empty (0: go
// on). The /mcp endpoint, served beside the API, is held to the same
// budget through it.
func (s *Server) RequestRefused(r *http.Request) time.Duration {
	now := time.Now()
	lim := s.limits.spend(r, r.Method != http.MethodGet && r.Method != http.MethodHead, now)
	if lim == nil {
		return 0
	}
	return max(untilToken(lim, now), time.Second)
}

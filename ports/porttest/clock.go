package porttest

import (
	"sync"
	"time"
)

// Clock is a ports.Clock that moves only when a test moves it, so TTLs,
// retention and schedules are tested without sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at start, cut to the millisecond like
// ports.SystemClock (stores keep milliseconds).
func NewClock(start time.Time) *Clock {
	return &Clock{now: start.UTC().Truncate(time.Millisecond)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d).Truncate(time.Millisecond)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC().Truncate(time.Millisecond)
	c.mu.Unlock()
}

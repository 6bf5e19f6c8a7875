package ports

import "time"

// Clock tells the time. Every service takes one so tests can move time for
// TTLs, retention and schedules instead of sleeping.
type Clock interface {
	Now() time.Time
}

// ClockFunc adapts a function to Clock.
type ClockFunc func() time.Time

// Now calls f.
func (f ClockFunc) Now() time.Time { return f() }

// SystemClock is the wall clock in UTC, cut to the millisecond: stores keep
// milliseconds, and a time handed out when a row is written must equal the
// one read back later.
var SystemClock Clock = ClockFunc(func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) })

package replicas_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/ports"
)

// tally counts upkeep passes by name.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *tally) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
}

func (c *tally) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func (c *tally) sweep(name string, err error) replicas.Sweep {
	return replicas.Sweep{Run: func(context.Context) (int, error) { c.add(name); return 1, err },
		Failed: name + " failed", Done: name + " done"}
}

// The upkeep's schedule: the pruning passes at start and hourly, idle
// stops every minute after adopting, expiries at their own interval, cron
// ticks at theirs; on a shared store the once-only passes run on the
// lease holder alone, while every replica beats and closes its own
// streams' expiries. Stop ends every loop.
func TestUpkeepRunsEachSweepOnItsSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newLeaseTable()
		var logs strings.Builder
		var logMu sync.Mutex
		log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return logs.Write(p)
		}), nil))
		start := func(self string, c *tally) *replicas.Upkeep {
			clock := ports.ClockFunc(time.Now) // synctest's clock
			roll := replicas.NewRoll(replicas.RollDeps{Store: store, Runs: &orphans{}, Tasks: &orphans{}, Clock: clock,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Self: self, Shared: true, FailoverAfter: 30 * time.Second})
			return replicas.StartUpkeep(replicas.UpkeepDeps{Roll: roll, Log: log,
				Wakeups: func(context.Context) { c.add("wakeups") },
				Tick:    func(context.Context) { c.add("tick") }, TickEvery: time.Second,
				Hourly: []replicas.Sweep{c.sweep("tokens", nil), c.sweep("traces", errors.New("disk full"))},
				Adopt:  func(context.Context) error { c.add("adopt"); return nil }, IdleStops: c.sweep("idle", nil),
				Expiries: c.sweep("expiries", nil), ExpiryEvery: 30 * time.Second,
			})
		}
		a, b := &tally{n: map[string]int{}}, &tally{n: map[string]int{}}
		ua := start("a", a)
		synctest.Wait()
		ub := start("b", b)
		time.Sleep(time.Hour + time.Millisecond)
		synctest.Wait()
		ua.Stop()
		ub.Stop()

		// Every replica adopts, pays its wake-ups and closes its own
		// streams' expiries; each once-only pass runs on one replica, the
		// one holding its lease then (a lapsed lease goes to whoever
		// claims first; one renewed every second stays with its holder).
		for name, want := range map[string]int{"wakeups": 1, "adopt": 1, "expiries": 120} {
			if a.get(name) != want || b.get(name) != want {
				t.Errorf("%s ran %d and %d times, want %d on each", name, a.get(name), b.get(name), want)
			}
		}
		for name, want := range map[string]int{"tokens": 2, "traces": 2, "idle": 60, "tick": 3600} {
			if got := a.get(name) + b.get(name); got != want {
				t.Errorf("%s ran %d times in all (%d on a), want %d", name, got, a.get(name), want)
			}
		}
		if a.get("tick") != 0 && b.get("tick") != 0 {
			t.Errorf("the cron lease changed hands while renewed: %d and %d ticks", a.get("tick"), b.get("tick"))
		}
		if a.get("tokens") != a.get("traces") || b.get("tokens") != b.get("traces") {
			t.Error("the hourly passes of one pruning round ran on different replicas")
		}
		if _, on := store.beats["b"]; !on {
			t.Error("b never beat")
		}
		logMu.Lock()
		defer logMu.Unlock()
		if !strings.Contains(logs.String(), "traces failed") || !strings.Contains(logs.String(), "tokens done") {
			t.Errorf("the passes were not logged: %s", logs.String())
		}
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

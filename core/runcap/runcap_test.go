package runcap_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runcap"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}

// world is a store with one session of u1, its runs, and the settings
// max_runs_per_user is read from.
type world struct {
	runs     *porttest.RunStore
	sessions *porttest.SessionStore
	settings *settings.Service
}

func newWorld(t *testing.T, maxRuns string) world {
	t.Helper()
	ctx := context.Background()
	runs := &porttest.RunStore{}
	w := world{runs: runs, sessions: &porttest.SessionStore{Runs: runs},
		settings: settings.New(&porttest.SettingStore{}, nil, porttest.NewClock(time.Unix(0, 0)))}
	if maxRuns != "" {
		if _, err := w.settings.Put(ctx, admin, settings.KeyMaxRunsPerUser, maxRuns); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.sessions.CreateSession(ctx, domain.Session{ID: "s1", OwnerID: "u1"}); err != nil {
		t.Fatal(err)
	}
	return w
}

// start records n running runs of owner, each in its own session.
func (w world) start(t *testing.T, owner string, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("%s-r%d", owner, i)
		if err := w.runs.CreateRun(context.Background(), domain.Run{ID: id, SessionID: "other-" + id, OwnerID: owner, Status: domain.RunRunning}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAdmitRefusesAStartAtTheCap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setting string // "" keeps the default (10)
		live    int
		want    int
		code    errs.Code
	}{
		{name: "no runs", setting: "2", live: 0, want: 2},
		{name: "one below", setting: "2", live: 1, want: 2},
		{name: "at the cap", setting: "2", live: 2, code: errs.RateLimited},
		{name: "past the cap", setting: "1", live: 3, code: errs.RateLimited},
		{name: "default", live: 9, want: 10},
		{name: "default reached", live: 10, code: errs.RateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.setting)
			w.start(t, "u1", tc.live)
			w.start(t, "u2", 5) // another user's runs count against nobody but them
			got, err := runcap.Admit(context.Background(), w.settings, w.runs, "u1")
			if tc.code != "" {
				if !errs.Is(err, tc.code) || got != 0 {
					t.Fatalf("Admit = %d, %v; want %s", got, err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Admit = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// failingCounter fails, as a store that cannot be read does.
type failingCounter struct{ err error }

func (f failingCounter) CountLiveRuns(context.Context, string) (int, error) { return 0, f.err }

func TestAdmitPassesOnTheCountersFailure(t *testing.T) {
	w := newWorld(t, "")
	boom := errs.E(errs.Unavailable, "store down")
	if _, err := runcap.Admit(context.Background(), w.settings, failingCounter{boom}, "u1"); !errors.Is(err, boom) {
		t.Fatalf("Admit = %v; want the counter's error", err)
	}
}

func TestInHoldsTheCapInTheRecordingTransaction(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int
		live      int // running runs of u1 in the transaction, the one it records among them
		withAlso  bool
		alsoRuns  bool
		wantRunID bool
		code      errs.Code
	}{
		{name: "the run just recorded fits", limit: 1, live: 1, withAlso: true, alsoRuns: true, wantRunID: true},
		{name: "without also", limit: 2, live: 2, wantRunID: true},
		{name: "one too many rolls back", limit: 1, live: 2, withAlso: true, code: errs.RateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, "")
			w.start(t, "u1", tc.live-1)
			ctx := context.Background()
			ran := false
			var also func(tx ports.SessionTx) error
			if tc.withAlso {
				also = func(tx ports.SessionTx) error { ran = true; return nil }
			}
			err := w.sessions.WriteSession(ctx, "s1", func(tx ports.SessionTx) error {
				if err := tx.CreateRun(ctx, domain.Run{ID: "new", SessionID: "s1", OwnerID: "u1", Status: domain.RunRunning}); err != nil {
					return err
				}
				return runcap.In(ctx, "u1", tc.limit, also)(tx)
			})
			if tc.code != "" && !errs.Is(err, tc.code) || tc.code == "" && err != nil {
				t.Fatalf("WriteSession = %v; want code %q", err, tc.code)
			}
			if ran != tc.alsoRuns {
				t.Fatalf("also ran = %v; want %v", ran, tc.alsoRuns)
			}
			_, findErr := w.runs.FindRun(ctx, "new")
			if (findErr == nil) != tc.wantRunID {
				t.Fatalf("the run is recorded = %v; want %v (%v)", findErr == nil, tc.wantRunID, findErr)
			}
		})
	}
}

func TestInPassesOnAlsosError(t *testing.T) {
	w := newWorld(t, "")
	ctx := context.Background()
	boom := errs.E(errs.Conflict, "taken")
	err := w.sessions.WriteSession(ctx, "s1", runcap.In(ctx, "u1", 5, func(ports.SessionTx) error { return boom }))
	if !errors.Is(err, boom) {
		t.Fatalf("WriteSession = %v; want also's error", err)
	}
}

package remote_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/ports/porttest"
)

// rows is a store of run rows; a stop sent to a replica ends the run's
// row, as the replica running it would, unless that replica is away.
type rows struct {
	mu   sync.Mutex
	runs map[string]domain.Run
	sent []remote.Command
	away map[string]bool // replicas that do not answer
}

func (r *rows) FindRun(_ context.Context, id string) (domain.Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[id]
	if !ok {
		return domain.Run{}, errs.E(errs.NotFound, "run not found")
	}
	return run, nil
}

func (r *rows) list(keep func(domain.Run) bool) []domain.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Run
	for _, run := range r.runs {
		if keep(run) {
			out = append(out, run)
		}
	}
	slices.SortFunc(out, func(a, b domain.Run) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (r *rows) ListSessionRuns(_ context.Context, sessionID string) ([]domain.Run, error) {
	return r.list(func(run domain.Run) bool { return run.SessionID == sessionID }), nil
}

func (r *rows) ListRunningRuns(_ context.Context, ownerID string) ([]domain.Run, error) {
	return r.list(func(run domain.Run) bool { return run.OwnerID == ownerID && run.Status == domain.RunRunning }), nil
}

// Command is the peers' answer: a stop ends the row (later, as a replica
// would), other commands are only recorded.
func (r *rows) Command(_ context.Context, replica string, cmd remote.Command) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.away[replica] {
		return errs.E(errs.Unavailable, "the server running this run did not answer")
	}
	r.sent = append(r.sent, cmd)
	if cmd.Op == remote.OpStop {
		go func() {
			time.Sleep(120 * time.Millisecond)
			r.mu.Lock()
			run := r.runs[cmd.RunID]
			run.Status, run.ErrorCode, run.LastSeq = domain.RunCancelled, cmd.Why, 9
			r.runs[cmd.RunID] = run
			r.mu.Unlock()
		}()
	}
	return nil
}

func (r *rows) commands() []remote.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

func newRows(runs ...domain.Run) *rows {
	r := &rows{runs: map[string]domain.Run{}, away: map[string]bool{}}
	for _, run := range runs {
		r.runs[run.ID] = run
	}
	return r
}

func newHub() *hub.Hub { return hub.New(hub.Options{}, porttest.NewClock(time.Now()), nil, nil) }

func running(id, session, owner, replica string) domain.Run {
	return domain.Run{ID: id, SessionID: session, OwnerID: owner, Replica: replica, Status: domain.RunRunning}
}

func TestWhereARunExecutes(t *testing.T) {
	alone := remote.New(nil, newRows(), newHub(), "a")
	if alone.Elsewhere(running("r", "s", "u", "b")) {
		t.Fatal("a replica with no peers reaches another")
	}
	r := remote.New(newRows(), newRows(), newHub(), "a")
	for _, c := range []struct {
		replica string
		want    bool
	}{{"b", true}, {"a", false}, {"", false}} {
		if got := r.Elsewhere(running("r", "s", "u", c.replica)); got != c.want {
			t.Errorf("a run on %q: elsewhere %v, want %v", c.replica, got, c.want)
		}
	}
}

func TestACommandForARunElsewhereGoesToItsReplica(t *testing.T) {
	store := newRows(running("r1", "s", "ann", "b"), running("r2", "s2", "ann", "a"),
		domain.Run{ID: "r3", SessionID: "s3", OwnerID: "ann", Replica: "b", Status: domain.RunCompleted})
	r := remote.New(store, store, newHub(), "a")
	ann := domain.Principal{User: domain.User{ID: "ann"}}
	local := errs.E(errs.Conflict, "not here")
	if err := r.Forward(context.Background(), ann, "r1", local, remote.Command{Op: remote.OpCancel}); err != nil {
		t.Fatalf("forwarding to b: %v", err)
	}
	got := store.commands()
	if len(got) != 1 || got[0].RunID != "r1" || got[0].UserID != "ann" || got[0].Op != remote.OpCancel {
		t.Fatalf("sent %+v", got)
	}
	// Here, ended, someone else's, or unknown: this replica's own answer.
	bob := domain.Principal{User: domain.User{ID: "bob"}}
	for _, c := range []struct {
		who domain.Principal
		run string
	}{{ann, "r2"}, {ann, "r3"}, {bob, "r1"}, {ann, "nope"}} {
		if err := r.Forward(context.Background(), c.who, c.run, local, remote.Command{Op: remote.OpCancel}); !errors.Is(err, local) {
			t.Errorf("%s's %s: %v, want the local refusal", c.who.User.ID, c.run, err)
		}
	}
	if n := len(store.commands()); n != 1 {
		t.Fatalf("%d commands sent", n)
	}
}

func TestStoppingASessionWaitsForItsRunElsewhere(t *testing.T) {
	store := newRows(running("r1", "s", "ann", "b"), running("r2", "s", "ann", "a"))
	r := remote.New(store, store, newHub(), "a")
	if err := r.StopSession(context.Background(), "s", "session_deleted"); err != nil {
		t.Fatal(err)
	}
	if run, _ := store.FindRun(context.Background(), "r1"); run.Status != domain.RunCancelled {
		t.Fatalf("the run elsewhere is %s once the stop returned", run.Status)
	}
	if got := store.commands(); len(got) != 1 || got[0].Op != remote.OpStop || got[0].Why != "session_deleted" {
		t.Fatalf("sent %+v; want one stop, to b", got)
	}
	// A replica that does not answer is left to the failover.
	store.runs["r4"] = running("r4", "s4", "ann", "c")
	store.away["c"] = true
	if err := r.StopSession(context.Background(), "s4", "session_deleted"); err != nil {
		t.Fatalf("a silent replica: %v", err)
	}
	// A stop that does not end in time is unavailable.
	store.runs["r5"] = running("r5", "s5", "ann", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := r.StopSession(ctx, "s5", "session_deleted"); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("a stop still going when ctx ends: %v", err)
	}
}

func TestStoppingAnAccountEndsItsRunsElsewhereForItsWatchersHere(t *testing.T) {
	store := newRows(running("r1", "s1", "ann", "b"), running("r2", "s2", "ann", "a"), running("r3", "s3", "bob", "b"))
	h := newHub()
	// r1 streams here, mirrored from b, up to seq 3.
	for seq := int64(1); seq <= 3; seq++ {
		h.Mirror("r1", "s1", "ann", domain.Event{Type: domain.EventStep, Seq: seq, Payload: []byte(`{}`)})
	}
	sub, err := h.Subscribe("r1", 3)
	if err != nil {
		t.Fatal(err)
	}
	r := remote.New(store, store, h, "a")
	wait, err := r.StopUser(context.Background(), "ann", "account_deleted")
	if err != nil {
		t.Fatal(err)
	}
	if got := store.commands(); len(got) != 1 || got[0].RunID != "r1" || got[0].Why != "account_deleted" {
		t.Fatalf("sent %+v; want a stop of ann's run on b", got)
	}
	if err := wait(context.Background(), "still"); err != nil {
		t.Fatal(err)
	}
	// No relay brought the end: the stored one was filed, past a gap.
	var types []string
	for {
		ev, err := sub.Next(context.Background())
		if err != nil {
			break
		}
		types = append(types, ev.Type)
	}
	if !slices.Equal(types, []string{domain.EventGap, domain.EventCancelled}) {
		t.Fatalf("the watcher here saw %v", types)
	}
	if wait, _ := remote.New(nil, store, h, "a").StopUser(context.Background(), "ann", "x"); wait(context.Background(), "") != nil {
		t.Fatal("alone, there is nothing to wait for")
	}
}

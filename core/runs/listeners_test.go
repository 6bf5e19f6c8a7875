package runs_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// hearing records what a listener was told, as "verb status" lines.
type hearing struct {
	mu    sync.Mutex
	heard []string
}

func (l *hearing) add(line string) { l.mu.Lock(); l.heard = append(l.heard, line); l.mu.Unlock() }

func (l *hearing) Ending(_ context.Context, run domain.Run, _ bool) func(tx ports.SessionTx) error {
	l.add("ending " + string(run.Status))
	return nil
}
func (l *hearing) Paused(run domain.Run, callID string) { l.add("paused " + callID) }
func (l *hearing) Resumed(domain.Run)                   { l.add("resumed") }
func (l *hearing) Ended(run domain.Run)                 { l.add("ended " + string(run.Status)) }
func (l *hearing) Recovered(run domain.Run)             { l.add("recovered " + string(run.Status)) }

// RunEnded and SpanSaved make it a ports.RunObserver, for traces.EndsTo.
func (l *hearing) RunEnded(run domain.Run) { l.add("observed " + string(run.Status)) }
func (l *hearing) SpanSaved(domain.Span)   {}

// until waits for want to be what was heard (Ended comes after the final
// event a watcher reads).
func (l *hearing) until(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		got := slices.Clone(l.heard)
		l.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("heard %q, want %q", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// Every path a run takes tells the one list of listeners, in order; the
// watchers hear how runs end through it — a paused run that is ended
// without resuming too.
func TestEveryWayARunGoesTellsTheListeners(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h *harness)
		want []string
	}{
		{name: "it completes", want: []string{"ending completed", "ended completed", "observed completed"},
			run: func(t *testing.T, h *harness) { h.run(domain.AgentSpec{}, "go", porttest.Reply{Text: "done"}) }},
		{name: "it pauses and is approved",
			want: []string{"paused c1", "resumed", "ending completed", "ended completed", "observed completed"},
			run: func(t *testing.T, h *harness) {
				_, _, approvals := h.pause([]string{"todo_write"}, porttest.Call{ID: "c1", Name: "todo_write", Arguments: todo("x")})
				h.llm.Queue(porttest.Reply{Text: "done"})
				if _, err := h.svc.Decide(t.Context(), h.user, approvals[0].ID, true, "", ""); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "its pause expires",
			want: []string{"paused c1", "ending cancelled", "ended cancelled", "observed cancelled"},
			run: func(t *testing.T, h *harness) {
				h.pause([]string{"todo_write"}, porttest.Call{ID: "c1", Name: "todo_write", Arguments: todo("x")})
				h.clock.Advance(1441 * time.Minute)
				if n, err := h.svc.ReapApprovals(t.Context()); n != 1 || err != nil {
					t.Fatalf("reaped %d, %v", n, err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			heard := &hearing{}
			h.listeners = []runs.Listener{heard, traces.EndsTo(heard)}
			h.newService()
			c.run(t, h)
			heard.until(t, c.want...)
		})
	}
}

// A restart's sweep tells the listeners of the runs it ended, as
// recovered (the task manager has its own way to the tasks of those).
func TestARestartsSweepTellsTheListeners(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A run the crash left running.
	s := h.session(h.agent(domain.AgentSpec{}).ID)
	orphan := domain.Run{ID: h.ids.NewID(), SessionID: s.ID, OwnerID: h.user.User.ID, Status: domain.RunRunning,
		Input: "lost", CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now()}
	if err := h.runStore.CreateRun(t.Context(), orphan); err != nil {
		t.Fatal(err)
	}
	heard := &hearing{}
	h.listeners = []runs.Listener{heard, traces.EndsTo(heard)}
	h.newService()
	orphans, err := h.sweep(t.Context())
	if err != nil || len(orphans) != 1 {
		t.Fatalf("orphans %d, %v", len(orphans), err)
	}
	heard.until(t, fmt.Sprintf("recovered %s", domain.RunError), fmt.Sprintf("observed %s", domain.RunError))
}

// endGate holds a run's end transaction open until released: the run's
// outcome is decided and being recorded, its slot not yet let go.
type endGate struct {
	hearing
	once             sync.Once
	entered, release chan struct{}
}

func (g *endGate) Ending(context.Context, domain.Run, bool) func(tx ports.SessionTx) error {
	return func(ports.SessionTx) error {
		g.once.Do(func() { close(g.entered) })
		<-g.release // closed once: later runs' ends go through
		return nil
	}
}

// A start on a session whose run is recording its end waits for that end
// rather than being refused: whoever read the end — a task's failed
// status is written in the end's transaction — may start the next run at
// once (a task's retry).
func TestAStartWaitsForTheEndBeingRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		gate := &endGate{entered: make(chan struct{}), release: make(chan struct{})}
		var released sync.Once
		release := func() { released.Do(func() { close(gate.release) }) }
		defer release() // a failure still lets the run end
		h.listeners = []runs.Listener{gate}
		h.newService()
		a := h.agent(domain.AgentSpec{})
		s := h.session(a.ID)
		h.llm.Queue(porttest.Reply{Text: "first"}, porttest.Reply{Text: "second"})
		h.start(s.ID, "one")
		<-gate.entered
		var next domain.Run
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			next, err = h.svc.StartBackground(t.Context(), runs.BackgroundStart{SessionID: s.ID, OwnerID: h.user.User.ID,
				AgentConfigID: a.ID, Input: "two", Continues: true})
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("the start answered while the run's end was being recorded: %v", err)
		default:
		}
		release()
		<-done
		if err != nil || next.ID == "" {
			t.Fatalf("the start after the end: %+v, %v", next, err)
		}
	})
}

package runs_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// engines are replicas' run engines on one store, reaching one another as
// a link does: a command goes to the engine its replica names.
type engines struct {
	mu   sync.Mutex
	by   map[string]*runs.Service
	sent []remote.Command
}

func (e *engines) Command(ctx context.Context, replica string, cmd remote.Command) error {
	e.mu.Lock()
	svc := e.by[replica]
	e.sent = append(e.sent, cmd)
	e.mu.Unlock()
	return svc.Execute(ctx, cmd)
}

func (e *engines) commands() []remote.Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]remote.Command(nil), e.sent...)
}

// replicaEngine starts another engine on h's stores as a replica reachable
// through net, and returns its service and hub (h then drives it).
func (h *harness) replicaEngine(net *engines) (*runs.Service, *hub.Hub) {
	h.peers = net
	h.newService()
	net.mu.Lock()
	net.by[h.replica] = h.svc
	net.mu.Unlock()
	return h.svc, h.hub
}

func TestDeletingAnAccountStopsItsRunsOnEveryReplica(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	net := &engines{by: map[string]*runs.Service{}}
	a, aHub := h.replicaEngine(net)
	run := h.started(domain.AgentSpec{}, porttest.Reply{Block: true}, porttest.Reply{Text: "never"})
	fromA, err := a.Subscribe(t.Context(), h.user, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fromA.Close()
	b, bHub := h.replicaEngine(net)
	// B follows the run as its link would have it: mirrored from A.
	bHub.Mirror(run.ID, run.SessionID, run.OwnerID, domain.Event{Type: domain.EventRunStarted, Seq: 1, Payload: []byte(`{}`)})
	fromB, err := bHub.Subscribe(run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fromB.Close()

	if err := b.StopUserWork(t.Context(), h.user.User.ID); err != nil {
		t.Fatal(err)
	}
	// Once it returns the run is over, on A and in the store.
	if _, busy := aHub.Busy(run.SessionID); busy {
		t.Fatal("the session is still busy on A")
	}
	if row := h.row(run.ID); row.Status != domain.RunCancelled || row.ErrorCode != "account_deleted" {
		t.Fatalf("row = %s %s", row.Status, row.ErrorCode)
	}
	if sent := net.commands(); len(sent) != 1 || sent[0].Op != remote.OpStop || sent[0].RunID != run.ID || sent[0].Why != "account_deleted" {
		t.Fatalf("B sent %+v", sent)
	}
	for name, sub := range map[string]*hub.Subscription{"A": fromA, "B": fromB} {
		var evs []domain.Event
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		for len(evs) == 0 || !last(evs).Final() {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("%s's stream: %v after %s", name, err, story(evs))
			}
			evs = append(evs, ev)
		}
		cancel()
		if got := ending(t, evs); got != "run.cancelled account_deleted" {
			t.Fatalf("%s's stream ended %s", name, got)
		}
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("%d model calls", n)
	}
	// A user with nothing running anywhere stops at once.
	if err := b.StopUserWork(t.Context(), h.other.User.ID); err != nil {
		t.Fatal(err)
	}
}

package runs_test

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// TestARunTakenOverWhileCutOffWritesNothingMore: another replica's
// failover ended a run while its replica was cut off (its row says so);
// when the replica comes back, the run's next write is refused by the
// fence and the run is let go — its answer not appended, its row left as
// the failover wrote it, its conversation free, its watchers here given
// the failover's ending.
func TestARunTakenOverWhileCutOffWritesNothingMore(t *testing.T) {
	h := newHarness(t)
	run, _, sid, hold := h.heldRun(porttest.Reply{Text: "a zombie's answer"})
	// The failover elsewhere: the row ended as server_restarted there.
	row := h.row(run.ID)
	now := h.clock.Now()
	row.Status, row.ErrorCode, row.EndedAt, row.LastSeq = domain.RunError, "server_restarted", &now, 2
	if err := h.runStore.UpdateRun(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	close(hold)
	events := h.events(run.ID, 0)
	if got := ending(t, events); got != "run.error server_restarted" {
		t.Fatalf("the watcher here saw the run end %q, want the failover's ending (%s)", got, story(events))
	}
	if got := h.row(run.ID); got.Status != domain.RunError || got.ErrorCode != "server_restarted" {
		t.Fatalf("the row after the zombie's turn: %s %s", got.Status, got.ErrorCode)
	}
	if hasEntry(h.entries(sid), "a zombie's answer") {
		t.Fatal("the run taken over appended its answer")
	}
	if _, busy := h.svc.Hub().Busy(sid); busy {
		t.Fatal("the run let go still holds its conversation here")
	}
}

// TestAFencedReplicaStopsItsRuns: a replica whose heartbeat the database
// stopped taking starts nothing, and a run of its stops at its next tool
// call, cancelled as database_unreachable, before running it.
func TestAFencedReplicaStopsItsRuns(t *testing.T) {
	h := newHarness(t)
	run, agentID, sid, hold := h.heldRun(porttest.Reply{Calls: []porttest.Call{{Name: "todo_write",
		Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}}, porttest.Reply{Text: "never"})
	h.fenced.Store(true)
	close(hold)
	events := h.events(run.ID, 0)
	if got := ending(t, events); got != "run.cancelled "+domain.CancelDatabaseUnreachable {
		t.Fatalf("ending %q (%s)", got, story(events))
	}
	if hasEntry(h.entries(sid), "Checklist saved") {
		t.Fatal("the fenced replica ran the tool call")
	}
	other := h.session(agentID).ID
	if _, err := h.svc.Start(context.Background(), h.user, other, runs.StartRequest{Input: "go"}); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("a start on a fenced replica: %v, want unavailable", err)
	}
	h.fenced.Store(false)
	h.llm.Queue(porttest.Reply{Block: true})
	blocked := h.start(other, "go")
	if n := h.svc.StopAll(domain.CancelDatabaseUnreachable); n != 1 {
		t.Fatalf("StopAll stopped %d runs, want 1", n)
	}
	if got := ending(t, h.events(blocked.ID, 0)); got != "run.cancelled "+domain.CancelDatabaseUnreachable {
		t.Fatalf("a run stopped by the roll ended %q", got)
	}
}

// heldRun starts a run of a plain agent on a new session, the model's
// first reply held until hold is closed (then more follow).
func (h *harness) heldRun(first porttest.Reply, more ...porttest.Reply) (run domain.Run, agentID, sessionID string, hold chan struct{}) {
	a := h.agent(domain.AgentSpec{})
	hold = make(chan struct{})
	first.Hold = hold
	h.llm.Queue(append([]porttest.Reply{first}, more...)...)
	sessionID = h.session(a.ID).ID
	return h.start(sessionID, "go"), a.ID, sessionID, hold
}

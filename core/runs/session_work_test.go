package runs_test

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestDeletingASessionEndsItsPausedRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	run, events, _ := h.pause([]string{"todo_write"}, call("todo_write", todo("x")))
	wantCode(t, h.sessions.Delete(ctx, h.other, run.SessionID), errs.NotFound)
	if err := h.sessions.Delete(ctx, h.admin, run.SessionID); err != nil {
		t.Fatalf("an admin may delete a session: %v", err)
	}
	if got := ending(t, h.events(run.ID, last(events).Seq)); got != "run.cancelled session_deleted" {
		t.Fatalf("the paused run's stream ended with %s", got)
	}
	if _, paused, err := h.runStore.FindPausedRun(ctx, run.SessionID); paused || err != nil {
		t.Fatalf("a paused run outlived its session (%v)", err)
	}
	_, err := h.sessions.Get(ctx, h.user, run.SessionID)
	wantCode(t, err, errs.NotFound)
	// The slot was let go: the id can be held again.
	release, err := h.hub.Hold(run.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	release()
}

func TestDeletingASessionStopsItsTitleCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	a := h.agent(domain.AgentSpec{})
	s, err := h.sessions.Create(ctx, h.user, "", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.llm.Route(isTitle, porttest.Reply{Block: true})
	h.llm.Queue(porttest.Reply{Block: true})
	run, err := h.svc.Start(ctx, h.user, s.ID, runs.StartRequest{Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := h.llm.Await(wctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	// Within less than the title's own budget: the delete stops the call.
	if err := h.sessions.Delete(wctx, h.user, s.ID); err != nil {
		t.Fatal(err)
	}
	// Once the delete returns nothing of the session calls a model.
	if n := h.llm.Open(); n != 0 {
		t.Fatalf("%d model calls still open", n)
	}
	if got := ending(t, h.events(run.ID, 0)); got != "run.cancelled session_deleted" {
		t.Fatalf("ending = %s", got)
	}
}

func TestAnOwnersCancelLeavesTheTitleCallGoing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	a := h.agent(domain.AgentSpec{})
	s, err := h.sessions.Create(ctx, h.user, "", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	h.llm.Route(isTitle, porttest.Reply{Text: "Named later", Hold: hold})
	h.llm.Queue(porttest.Reply{Block: true})
	run, err := h.svc.Start(ctx, h.user, s.ID, runs.StartRequest{Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := h.llm.Await(wctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Cancel(ctx, h.user, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	// The cancel answers at once, without waiting for the title.
	if got := ending(t, h.events(run.ID, 0)); got != "run.cancelled stopped" {
		t.Fatalf("ending = %s", got)
	}
	if n := h.llm.Open(); n != 1 {
		t.Fatalf("%d model calls open: the title call goes on", n)
	}
	close(hold)
}

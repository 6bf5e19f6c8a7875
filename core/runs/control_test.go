package runs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// started starts a run whose first model reply is first, and returns once
// the model has the call — the moment a test acts on a run in flight.
func (h *harness) started(spec domain.AgentSpec, first porttest.Reply, more ...porttest.Reply) domain.Run {
	h.t.Helper()
	a := h.agent(spec)
	h.llm.Queue(append([]porttest.Reply{first}, more...)...)
	run := h.start(h.session(a.ID).ID, "go")
	ctx, cancel := context.WithTimeout(h.t.Context(), wait)
	defer cancel()
	if _, err := h.llm.Await(ctx, 1, nil); err != nil {
		h.t.Fatal(err)
	}
	return run
}

func TestStoppingALiveRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		first  porttest.Reply
		stop   func(t *testing.T, h *harness, run domain.Run)
		want   string
		has    string // an entry the stop leaves
		calls  int
		closes bool // first.Hold is released after the stop
	}{
		{name: "abort", first: porttest.Reply{Block: true}, want: "run.cancelled stopped", has: "annotation/: Stopped before it finished.", calls: 1,
			stop: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.svc.Cancel(t.Context(), h.user, run.ID, domain.CancelAbort); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "graceful finishes the turn first", first: porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("x"))}},
			closes: true, want: "run.cancelled stopped", has: "item/tool output: Checklist saved", calls: 1,
			stop: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.svc.Cancel(t.Context(), h.user, run.ID, domain.CancelGraceful); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "graceful lets a final answer stand", first: porttest.Reply{Text: "last words"}, closes: true,
			want: "run.output last words", has: "item/model message: last words", calls: 1,
			stop: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.svc.Cancel(t.Context(), h.user, run.ID, domain.CancelGraceful); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "deleting the session", first: porttest.Reply{Block: true}, want: "run.cancelled session_deleted", calls: 1,
			stop: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.sessions.Delete(t.Context(), h.user, run.SessionID); err != nil {
					t.Fatal(err)
				}
				_, err := h.sessions.Get(t.Context(), h.user, run.SessionID)
				wantCode(t, err, errs.NotFound)
			}},
		{name: "deleting the owner's account", first: porttest.Reply{Block: true}, want: "run.cancelled account_deleted", calls: 1,
			has: "annotation/: Its owner's account was deleted.",
			stop: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.svc.StopUserWork(t.Context(), h.user.User.ID); err != nil {
					t.Fatal(err)
				}
				// Once it returns the run is over.
				if _, busy := h.hub.Busy(run.SessionID); busy {
					t.Fatal("the session is still busy")
				}
			}},
		{name: "a server shutdown", first: porttest.Reply{Block: true}, want: "run.cancelled server_shutdown", calls: 1,
			has: "annotation/: The server shut down during this run.",
			stop: func(t *testing.T, h *harness, run domain.Run) {
				ctx, cancel := context.WithCancel(t.Context())
				cancel() // no grace: cancel what runs
				h.svc.Shutdown(ctx)
				_, err := h.svc.Start(t.Context(), h.user, run.SessionID, runs.StartRequest{Input: "again"})
				wantCode(t, err, errs.Unavailable)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			hold := make(chan struct{})
			if c.closes {
				c.first.Hold = hold
			}
			run := h.started(domain.AgentSpec{}, c.first, porttest.Reply{Text: "never"})
			c.stop(t, h, run)
			close(hold)
			events := h.events(run.ID, 0)
			if got := ending(t, events); got != c.want {
				t.Fatalf("ending = %s, want %s (story %s)", got, c.want, story(events))
			}
			if n := len(h.llm.Requests()); n != c.calls {
				t.Fatalf("%d model calls", n)
			}
			if c.has != "" && !hasEntry(h.entries(run.SessionID), c.has) {
				t.Fatalf("no entry has %q: %q", c.has, describe(h.entries(run.SessionID)))
			}
			if strings.HasPrefix(c.want, "run.cancelled") && !strings.Contains(c.want, "deleted") {
				if row := h.row(run.ID); row.Status != domain.RunCancelled || row.ErrorCode != strings.TrimPrefix(c.want, "run.cancelled ") {
					t.Fatalf("row = %+v", row)
				}
			}
		})
	}
}

func TestCancelAndInjectRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	run := h.started(domain.AgentSpec{}, porttest.Reply{Block: true})
	wantCode(t, h.svc.Cancel(ctx, h.user, run.ID, "sideways"), errs.Validation)
	wantCode(t, h.svc.Cancel(ctx, h.other, run.ID, ""), errs.NotFound)
	wantCode(t, h.svc.Cancel(ctx, h.user, "00000000-0000-7000-8000-00000000dead", ""), errs.NotFound)
	wantCode(t, h.svc.Inject(t.Context(), h.user, run.ID, "sometime", "x"), errs.Validation)
	wantCode(t, h.svc.Inject(t.Context(), h.user, run.ID, domain.QueueSteer, "  "), errs.Validation)
	wantCode(t, h.svc.Inject(t.Context(), h.other, run.ID, domain.QueueSteer, "x"), errs.NotFound)
	// One live run per session.
	_, err := h.svc.Start(ctx, h.user, run.SessionID, runs.StartRequest{Input: "more"})
	wantCode(t, err, errs.Conflict)
	_, err = h.sessions.Branch(ctx, h.user, run.SessionID, h.entries(run.SessionID)[0].ID)
	wantCode(t, err, errs.Conflict)
	if err := h.svc.Cancel(ctx, h.user, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	h.events(run.ID, 0)
	wantCode(t, h.svc.Cancel(ctx, h.user, run.ID, ""), errs.Conflict)
	wantCode(t, h.svc.Inject(t.Context(), h.user, run.ID, domain.QueueSteer, "late"), errs.Conflict)
	// Once it ended the session moves again.
	if _, err := h.sessions.Branch(ctx, h.user, run.SessionID, h.entries(run.SessionID)[0].ID); err != nil {
		t.Fatalf("branch after the run: %v", err)
	}
}

func TestInjectedInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		queue   domain.QueueMode
		first   porttest.Reply
		want    string
		guarded bool   // a blocking input guardrail refuses the injection
		sent    string // what the second model call is sent, after the user's go
	}{
		{name: "steer reaches the next turn", queue: domain.QueueSteer, first: porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("a"))}},
			want: "run.output ok", sent: "todo_write " + todo("a") + "\nChecklist saved: 0 of 1 done.\nshorter please\n"},
		{name: "next_turn too", queue: domain.QueueNextTurn, first: porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("a"))}},
			want: "run.output ok", sent: "todo_write " + todo("a") + "\nChecklist saved: 0 of 1 done.\nshorter please\n"},
		{name: "follow_up opens a new exchange", queue: domain.QueueFollowUp, first: porttest.Reply{Text: "first answer"},
			want: "run.output ok", sent: "first answer\nshorter please\n"},
		{name: "a steer passes the input guardrails", queue: domain.QueueSteer, guarded: true,
			first: porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("a"))}}, want: "run.error guardrail_tripwire"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var spec domain.AgentSpec
			if c.guarded {
				h.guardrail(domain.Guardrail{Name: "polite", Stages: []domain.GuardrailStage{domain.StageInput}, Mode: domain.ModeRegex,
					Pattern: "please", Blocking: true})
				spec.Guardrails.Guardrails = []string{"polite"}
			}
			hold := make(chan struct{})
			c.first.Hold = hold
			run := h.started(spec, c.first, porttest.Reply{Text: "ok"})
			if err := h.svc.Inject(t.Context(), h.user, run.ID, c.queue, "shorter please"); err != nil {
				t.Fatal(err)
			}
			close(hold)
			events := h.events(run.ID, 0)
			if got := ending(t, events); got != c.want {
				t.Fatalf("ending = %s, want %s", got, c.want)
			}
			if c.guarded {
				if n := len(h.llm.Requests()); n != 1 {
					t.Fatalf("%d model calls", n)
				}
				return
			}
			inj := ofType(events, domain.EventInjected)
			if len(inj) != 1 || payload[domain.InjectedPayload](t, inj[0]).Input != "shorter please" || payload[domain.InjectedPayload](t, inj[0]).Index != 0 {
				t.Fatalf("injected events = %v", inj)
			}
			reqs := h.llm.Requests()
			if len(reqs) != 2 || porttest.InputText(reqs[1]) != "go\n"+c.sent {
				t.Fatalf("the second call was sent %q, want %q", porttest.InputText(reqs[len(reqs)-1]), "go\n"+c.sent)
			}
			if !hasEntry(h.entries(run.SessionID), "item/user message: shorter please") {
				t.Fatalf("the injection was not recorded: %q", describe(h.entries(run.SessionID)))
			}
		})
	}
}

func TestStartRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	mine := h.agent(domain.AgentSpec{})
	bare, err := h.sessions.Create(ctx, h.user, "bare", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		who     domain.Principal
		session string
		req     runs.StartRequest
		code    errs.Code
	}{
		{name: "a session without an agent", who: h.user, session: bare.ID, req: runs.StartRequest{Input: "hi"}, code: errs.Validation},
		{name: "an unknown agent", who: h.user, session: bare.ID, req: runs.StartRequest{Input: "hi", AgentConfigID: "nope"}, code: errs.Validation},
		{name: "another member's session", who: h.other, session: bare.ID, req: runs.StartRequest{Input: "hi", AgentConfigID: mine.ID}, code: errs.NotFound},
		{name: "nothing to answer", who: h.user, session: bare.ID, req: runs.StartRequest{AgentConfigID: mine.ID}, code: errs.Validation},
		{name: "a project without sandboxes", who: h.user, session: bare.ID, req: runs.StartRequest{Input: "hi", AgentConfigID: mine.ID, ProjectID: "p"},
			code: errs.Validation},
	} {
		_, err := h.svc.Start(ctx, c.who, c.session, c.req)
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	// Another member cannot use a private agent.
	theirs, err := h.sessions.Create(ctx, h.other, "theirs", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.svc.Start(ctx, h.other, theirs.ID, runs.StartRequest{Input: "hi", AgentConfigID: mine.ID})
	wantCode(t, err, errs.Validation)
	if rows := h.runStore.Runs(); len(rows) != 0 {
		t.Fatalf("refused starts left rows: %+v", rows)
	}
	// The agent a run names becomes the session's.
	h.llm.Queue(porttest.Reply{Text: "ok"})
	run, err := h.svc.Start(ctx, h.user, bare.ID, runs.StartRequest{Input: "hi", AgentConfigID: mine.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.events(run.ID, 0)
	if s, _ := h.sessions.Get(ctx, h.user, bare.ID); s.AgentConfigID != mine.ID {
		t.Fatalf("session = %+v", s)
	}
}

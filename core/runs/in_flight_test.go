package runs_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// hangingProject is a project whose every command signals entered and
// then waits for its cancellation: a call the crash cuts off.
func (h *harness) hangingProject() (string, <-chan struct{}) {
	entered := make(chan struct{}, 4)
	return h.withProject("", func(ctx context.Context, _ ports.ExecRequest) (int, error) {
		entered <- struct{}{}
		<-ctx.Done()
		return -1, ctx.Err()
	}), entered
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(wait):
		t.Fatalf("%s never happened", what)
	}
}

// crash starts the engine afresh, as a restart after a kill does, and
// ends what the old one left running.
func (h *harness) crash() []domain.Run {
	h.t.Helper()
	dead := h.svc
	h.t.Cleanup(func() {
		// The dead engine stands for a killed process: its runs are stopped
		// at once when the test ends, not waited for.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		dead.Shutdown(ctx)
	})
	h.newService()
	ended, err := h.sweep(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	return ended
}

const restartNote = "annotation/: The server restarted during this run; it ended with an error."

// A call a crash cuts off is recorded: the model's turn, the call's
// unknown outcome, then the restart's note; a failed function span under
// the agent's span; and a second sweep records nothing twice.
func TestACallCutOffByACrashIsRecordedWithAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	project, entered := h.hangingProject()
	a := h.agent(domain.AgentSpec{})
	h.llm.Queue(porttest.Reply{Text: "Running it.", Calls: []porttest.Call{call("exec_command", `{"cmd":"deploy"}`)}})
	run, err := h.svc.Start(t.Context(), h.user, h.session(a.ID).ID, runs.StartRequest{Input: "ship it", ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, entered, "the command")
	if ended := h.crash(); len(ended) != 1 || ended[0].ID != run.ID {
		t.Fatalf("recovered %+v", ended)
	}
	got := describe(h.entries(run.SessionID))
	want := []string{"item/user message: ship it", "item/model message: Running it.", "item/model call exec_command",
		"item/tool output: The server restarted during this call; its result is unknown. It may or may not have taken effect: check before calling it again.",
		restartNote}
	if !slices.Equal(got, want) {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fn, agents := h.spans(run.ID, domain.SpanFunction), h.spans(run.ID, domain.SpanAgent)
	if len(fn) != 1 || fn[0].Name != "exec_command" || fn[0].Meta["outcome"] != "unknown" || !strings.Contains(fn[0].Error, "result is unknown") ||
		len(agents) != 1 || fn[0].ParentID != agents[0].ID || agents[0].Name != a.Name {
		t.Fatalf("function spans %+v under agent spans %+v", fn, agents)
	}
	// A failover's sweep after another crash finds nothing left to record.
	if ended := h.crash(); len(ended) != 0 {
		t.Fatalf("a second sweep ended %+v", ended)
	}
	if n := len(h.entries(run.SessionID)); n != len(want) {
		t.Fatalf("a second sweep wrote entries: %q", describe(h.entries(run.SessionID)))
	}
}

// Only the turn in flight is recorded after a crash: an earlier turn's
// calls, answered and recorded, keep their real outputs and get no second
// record.
func TestOnlyTheTurnInFlightIsRecordedAfterACrash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	entered := make(chan struct{}, 4)
	project := h.withProject("", func(ctx context.Context, req ports.ExecRequest) (int, error) {
		if strings.Contains(strings.Join(req.Cmd, " "), "second") {
			entered <- struct{}{}
			<-ctx.Done()
			return -1, ctx.Err()
		}
		return echo(ctx, req)
	})
	a := h.agent(domain.AgentSpec{})
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{call("exec_command", `{"cmd":"first"}`)}},
		porttest.Reply{Calls: []porttest.Call{call("exec_command", `{"cmd":"second"}`)}})
	run, err := h.svc.Start(t.Context(), h.user, h.session(a.ID).ID, runs.StartRequest{Input: "go", ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, entered, "the second command")
	h.crash()
	var outputs []string
	for _, d := range describe(h.entries(run.SessionID)) {
		if strings.Contains(d, " output: ") {
			outputs = append(outputs, d[:min(len(d), 40)])
		}
	}
	if len(outputs) != 2 || !strings.Contains(outputs[0], "exit_code: 0") || !strings.Contains(outputs[1], "The server restarted") {
		t.Fatalf("outputs: %q", describe(h.entries(run.SessionID)))
	}
}

// A resumed turn a crash cuts off answers every call it had: the one the
// person rejected as rejected, the one running as unknown — none is left
// without an output for the model's next turn.
func TestAResumedTurnCutOffByACrashAnswersEveryCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	project, entered := h.hangingProject()
	a := h.agent(domain.AgentSpec{Approval: domain.AgentApproval{ApproveTools: []string{"exec_command"}}})
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{{ID: "c1", Name: "exec_command", Arguments: `{"cmd":"rm -rf build"}`},
		{ID: "c2", Name: "exec_command", Arguments: `{"cmd":"make"}`}}})
	run, err := h.svc.Start(ctx, h.user, h.session(a.ID).ID, runs.StartRequest{Input: "build", ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	if events := h.events(run.ID, 0); last(events).Type != domain.EventInterrupted {
		t.Fatalf("the run did not pause: %s", story(events))
	}
	approvals, err := h.svc.Approvals(ctx, h.user, run.SessionID)
	if err != nil || len(approvals) != 2 {
		t.Fatalf("approvals %+v, %v", approvals, err)
	}
	for _, ap := range approvals {
		if _, err := h.svc.Decide(ctx, h.user, ap.ID, ap.ToolCallID == "c2", "", "not that"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, entered, "the approved command")
	h.crash()
	var outputs []string
	for _, d := range describe(h.entries(run.SessionID)) {
		if strings.Contains(d, " output: ") {
			outputs = append(outputs, d)
		}
	}
	if len(outputs) != 2 || !strings.Contains(outputs[0], "rejected this call") || !strings.Contains(outputs[1], "result is unknown") {
		t.Fatalf("outputs after the crash: %q", describe(h.entries(run.SessionID)))
	}
}

// A cancel among a turn's tool calls keeps the turn: the model's items, a
// finished call's own output, those cut off as stopped with an unknown
// result, one not yet started as not run — every call answered for the
// model's next turn — then the cancel's note.
func TestACancelDuringToolCallsKeepsTheTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		concurrency int
		cmds        []string
		hanging     int
		want        []string // the outputs, in the calls' order
	}{
		{name: "finished and cut off", concurrency: 2, cmds: []string{"quick", "slow", "next"}, hanging: 2,
			want: []string{"exit_code: 0", "stopped during this call", "stopped during this call"}},
		{name: "cut off and not started", concurrency: 1, cmds: []string{"slow", "next"}, hanging: 1,
			want: []string{"stopped during this call", "stopped before this call ran"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := t.Context()
			entered := make(chan struct{}, 4)
			project := h.withProject("", func(ctx context.Context, req ports.ExecRequest) (int, error) {
				if strings.Contains(strings.Join(req.Cmd, " "), "quick") {
					return echo(ctx, req)
				}
				entered <- struct{}{}
				<-ctx.Done()
				return -1, ctx.Err()
			})
			a := h.agent(domain.AgentSpec{Behavior: domain.AgentBehavior{MaxToolConcurrency: c.concurrency}})
			var calls []porttest.Call
			for _, cmd := range c.cmds {
				calls = append(calls, porttest.Call{ID: cmd, Name: "exec_command", Arguments: `{"cmd":"` + cmd + `"}`})
			}
			h.llm.Queue(porttest.Reply{Text: "On it.", Calls: calls})
			run, err := h.svc.Start(ctx, h.user, h.session(a.ID).ID, runs.StartRequest{Input: "go", ProjectID: project})
			if err != nil {
				t.Fatal(err)
			}
			for range c.hanging {
				waitFor(t, entered, "a hanging command")
			}
			if err := h.svc.Cancel(ctx, h.user, run.ID, domain.CancelAbort); err != nil {
				t.Fatal(err)
			}
			if got := ending(t, h.events(run.ID, 0)); !strings.HasPrefix(got, "run.cancelled") {
				t.Fatalf("ending %s", got)
			}
			got := describe(h.entries(run.SessionID))
			var outputs []string
			for _, d := range got {
				if _, out, ok := strings.Cut(d, " output: "); ok {
					outputs = append(outputs, out)
				}
			}
			head := []string{"item/user message: go", "item/model message: On it."}
			ok := len(got) == 2+2*len(c.cmds)+1 && slices.Equal(got[:2], head) && strings.HasPrefix(got[len(got)-1], "annotation/") &&
				len(outputs) == len(c.want)
			for i := 0; ok && i < len(c.want); i++ {
				ok = strings.Contains(outputs[i], c.want[i])
			}
			if !ok {
				t.Fatalf("entries:\n%s\nwant the outputs %q", strings.Join(got, "\n"), c.want)
			}
		})
	}
}

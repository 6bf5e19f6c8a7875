package approvals_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// lives keeps what the desk told the run engine and its listeners.
type lives struct {
	mu      sync.Mutex
	told    []string
	resumed []approvals.Decided
	steps   []string
}

func (l *lives) add(s string) { l.mu.Lock(); l.told = append(l.told, s); l.mu.Unlock() }
func (l *lives) Ending(_ context.Context, run domain.Run, _ bool) func(tx ports.SessionTx) error {
	l.add("ending " + run.ID + " " + string(run.Status))
	return nil
}
func (l *lives) Resumed(run domain.Run) { l.add("resumed " + run.ID) }
func (l *lives) Ended(run domain.Run)   { l.add("ended " + run.ID + " " + run.ErrorCode) }
func (l *lives) DecideStep(_ context.Context, a domain.Approval, approve bool, reason string) (domain.Run, error) {
	l.steps = append(l.steps, a.ID+" "+reason)
	return domain.Run{ID: "task-run"}, nil
}
func (l *lives) story() string { l.mu.Lock(); defer l.mu.Unlock(); return strings.Join(l.told, ", ") }

type desk struct {
	gate
	*approvals.Desk
	hub   *hub.Hub
	lives *lives
}

func newDesk(t *testing.T) desk {
	t.Helper()
	g := newGate(t)
	d := desk{gate: g, hub: hub.New(hub.Options{}, g.clock, nil, nil), lives: &lives{}}
	d.Desk = approvals.NewDesk(approvals.DeskDeps{Gate: g.Service, Hub: d.hub, Store: g.runs, Runs: g.runs,
		Sessions: sessions.NewJournal(sessions.Deps{Store: g.sessions, Runs: g.runs, IDs: &porttest.IDs{}, Clock: g.clock}), Lifecycle: d.lives, Steps: d.lives,
		Replica: "me", Clock: g.clock, Resume: func(run domain.Run, state domain.PauseState, decided approvals.Decided) {
			d.lives.add("launched " + run.ID)
			d.lives.resumed = append(d.lives.resumed, decided)
		}})
	return d
}

// pauseRun files a paused run of alice's session sa waiting on calls c1, c2.
func (d desk) pauseRun(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	run := domain.Run{ID: "r1", SessionID: "sa", OwnerID: "alice", Status: domain.RunRunning}
	if err := d.runs.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	calls := []domain.Item{{Type: "function_call", CallID: "c1", Name: tools.ExecCommand, Arguments: `{"cmd":"ls"}`},
		{Type: "function_call", CallID: "c2", Name: "deploy", Arguments: "{}"}}
	n := 0 // the approvals' ids are a-c1, a-c2, as their calls'
	rows := approvals.Rows(run, calls, []bool{true, true}, d.clock.Now(), func() string { n++; return "a-c" + strconv.Itoa(n) })
	if err := d.runs.FileApprovals(ctx, rows, run, domain.PauseState{Calls: calls, Gated: []bool{true, true}}); err != nil {
		t.Fatal(err)
	}
}

func TestTheLastDecisionResumesTheSameRun(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	d.pauseRun(t)
	run, err := d.Decide(ctx, alice, "a-c1", true, domain.ScopeOnce, "")
	if err != nil || run.Status != domain.RunInterrupted || d.lives.story() != "" {
		t.Fatalf("the first of two decisions: %+v, %v, told %q; want the run still waiting", run, err, d.lives.story())
	}
	run, err = d.Decide(ctx, alice, "a-c2", false, "", "not today")
	if err != nil || run.ID != "r1" || run.Status != domain.RunRunning {
		t.Fatalf("the last decision: %+v, %v; want r1 running", run, err)
	}
	if got := d.lives.story(); got != "resumed r1, launched r1" || len(d.lives.resumed[0]) != 2 {
		t.Fatalf("told %q with %d decisions; want the listeners told first, then the run launched with both", got, len(d.lives.resumed))
	}
	if live, busy := d.hub.Busy("sa"); !busy || live != "r1" {
		t.Fatal("the resumed run does not hold its session")
	}
	if _, err := d.Decide(ctx, alice, "a-c2", true, domain.ScopeOnce, ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a decision made twice: %v; want not_found", err)
	}
}

func TestADecisionWaitsForNoOtherRunOnTheSession(t *testing.T) {
	d := newDesk(t)
	d.pauseRun(t)
	if err := d.hub.Claim("sa", "another", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Decide(context.Background(), alice, "a-c1", true, domain.ScopeOnce, ""); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a decision while another run is active: %v; want conflict", err)
	}
}

func TestAWorkflowStepsApprovalIsItsTasks(t *testing.T) {
	d := newDesk(t)
	d.pause(t, "r9", "sa", "alice", [3]string{"s1", domain.StepApprovalTool, "{}"})
	if run, err := d.Decide(context.Background(), alice, "a-s1", false, "", "no"); err != nil || run.ID != "task-run" ||
		len(d.lives.steps) != 1 {
		t.Fatalf("a step's decision: %+v, %v, steps %v", run, err, d.lives.steps)
	}
}

func TestAnEndedPauseRecordsItsCallsAsNotRunOnce(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	d.pauseRun(t)
	sub := d.follow(t)
	if err := d.Supersede(ctx, "sa"); err != nil {
		t.Fatal(err)
	}
	if got := d.lives.story(); got != "ending r1 cancelled, ended r1 superseded" {
		t.Fatalf("told %q", got)
	}
	entries, _ := d.sessions.Entries(ctx, "sa")
	var texts []string
	for _, e := range entries {
		texts = append(texts, e.Text+string(e.Item))
	}
	if all := strings.Join(texts, "\n"); strings.Count(all, "function_call_output") != 2 || !strings.Contains(all, "A new message arrived") {
		t.Fatalf("the conversation holds:\n%s", all)
	}
	if ev, err := sub.Next(ctx); err != nil || ev.Type != domain.EventCancelled {
		t.Fatalf("the run's watchers saw %+v, %v; want run.cancelled", ev, err)
	}
	// Another ending finds the pause gone: nothing is recorded twice.
	if err := d.Supersede(ctx, "sa"); err != nil || strings.Count(d.lives.story(), "ended") != 1 {
		t.Fatalf("a second ending: %v, told %q", err, d.lives.story())
	}
	if _, err := d.Decide(ctx, alice, "a-c1", true, domain.ScopeOnce, ""); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a decision after the pause ended: %v; want not_found", err)
	}
}

// follow reopens r1's stream, as after a restart, and subscribes to it.
func (d desk) follow(t *testing.T) *hub.Subscription {
	t.Helper()
	if err := d.ReopenPaused(context.Background()); err != nil {
		t.Fatal(err)
	}
	sub, err := d.hub.Subscribe("r1", 0)
	if err != nil {
		t.Fatalf("a paused run has no stream after ReopenPaused: %v", err)
	}
	t.Cleanup(sub.Close)
	return sub
}

func TestApprovalsThatWaitTooLongEndTheirRuns(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	d.pauseRun(t)
	d.pause(t, "r9", "sa2", "alice", [3]string{"s1", domain.StepApprovalTool, "{}"})
	if n, err := d.ReapApprovals(ctx); err != nil || n != 0 {
		t.Fatalf("reaped %d, %v before the TTL", n, err)
	}
	d.clock.Advance(25 * time.Hour)
	if n, err := d.ReapApprovals(ctx); err != nil || n != 2 {
		t.Fatalf("reaped %d, %v; want both", n, err)
	}
	if got := d.lives.story(); got != "ending r1 cancelled, ended r1 expired" || len(d.lives.steps) != 1 ||
		!strings.Contains(d.lives.steps[0], "nobody decided within 1440 minutes") {
		t.Fatalf("told %q, steps %v", got, d.lives.steps)
	}
	if list, _ := d.List(ctx, alice, "sa"); len(list) != 0 {
		t.Fatalf("expired approvals still listed: %v", ids(list))
	}
	if _, err := d.ByCall(ctx, alice, "c1"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("an expired approval found by its call: %v", err)
	}
}

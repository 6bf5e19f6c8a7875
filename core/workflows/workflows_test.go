package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// plan → exec → verify (a gate), verify FAIL → exec: the fix loop.
func fixLoop() domain.WorkflowState {
	return domain.WorkflowState{Steps: []domain.WorkflowStep{
		{ID: "p", Name: "plan", Agent: "a", Prompt: "plan it"},
		{ID: "x", Name: "exec", Agent: "a", Prompt: "do it"},
		{ID: "v", Name: "verify", Agent: "a", Prompt: "check it", Gate: true, OnFailure: "x"},
	}}
}

func at(st domain.WorkflowState, step string, laps map[string]int) domain.WorkflowState {
	st.StepID, st.Laps = step, laps
	return st
}

func TestNext(t *testing.T) {
	loop := fixLoop()
	custom := fixLoop()
	custom.Steps[2].GatePass, custom.Steps[2].GateFail = "LGTM", "CHANGES"
	custom.Budget.MaxLaps = 1
	for _, c := range []struct {
		name string
		st   domain.WorkflowState
		o    Outcome
		want Decision
	}{
		{"a step that completes falls through", at(loop, "p", nil), Outcome{Output: "a plan"},
			Decision{Ending: domain.StepCompleted, Action: Launch, Next: "x"}},
		{"a failed run with no on_failure fails the execution", at(loop, "x", nil), Outcome{Errored: true},
			Decision{Ending: domain.StepFailed, Action: Failed, Reason: `the step "exec" failed`}},
		{"a gate's PASS on the last step finishes", at(loop, "v", nil), Outcome{Output: "all good\n\nPASS"},
			Decision{Ending: domain.StepPass, Action: Finish}},
		{"a gate's FAIL takes the back edge", at(loop, "v", nil), Outcome{Output: "2 tests fail\nFAIL"},
			Decision{Ending: domain.StepFail, Action: Launch, Next: "x", Edge: "v→x"}},
		{"the edge taken max_laps times ends the loop, naming it", at(loop, "v", map[string]int{"v→x": 3}), Outcome{Output: "FAIL"},
			Decision{Ending: domain.StepFail, Action: Failed, Edge: "v→x", Reason: "loop bound reached: verify → exec looped 3 times"}},
		{"a gate that reports neither fails, saying so", at(loop, "v", nil), Outcome{Output: "I think it is fine"},
			Decision{Ending: domain.StepFailed, Action: Failed, Reason: `the gate "verify" reported no verdict: its answer must end with PASS or FAIL`}},
		{"a gate whose run errored fails structurally", at(loop, "v", nil), Outcome{Errored: true, Output: "PASS"},
			Decision{Ending: domain.StepFailed, Action: Launch, Next: "x", Edge: "v→x"}},
		{"a gate's own words", at(custom, "v", nil), Outcome{Output: "**CHANGES**"},
			Decision{Ending: domain.StepFail, Action: Launch, Next: "x", Edge: "v→x"}},
		{"a budget's max_laps", at(custom, "v", map[string]int{"v→x": 1}), Outcome{Output: "CHANGES"},
			Decision{Ending: domain.StepFail, Action: Failed, Edge: "v→x", Reason: "loop bound reached: verify → exec looped 1 times"}},
		{"PASS is not the custom pass word", at(custom, "v", nil), Outcome{Output: "PASS"},
			Decision{Ending: domain.StepFailed, Action: Failed, Reason: `the gate "verify" reported no verdict: its answer must end with LGTM or CHANGES`}},
		{"an unknown current step fails", at(loop, "gone", nil), Outcome{},
			Decision{Ending: domain.StepFailed, Action: Failed, Reason: `the step "gone" is not in this workflow`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Next(c.st, c.o); got != c.want {
				t.Fatalf("Next = %+v\nwant   %+v", got, c.want)
			}
		})
	}
	// Explicit edges: end finishes on success, fails on failure; a forward
	// skip is not a lap.
	st := domain.WorkflowState{Steps: []domain.WorkflowStep{
		{ID: "a", Name: "a", OnSuccess: "c", OnFailure: domain.WorkflowEnd},
		{ID: "b", Name: "b"},
		{ID: "c", Name: "c", OnSuccess: domain.WorkflowEnd},
		{ID: "d", Name: "d"},
	}}
	if d := Next(at(st, "a", nil), Outcome{}); d.Action != Launch || d.Next != "c" || d.Edge != "" {
		t.Fatalf("skip = %+v", d)
	}
	if d := Next(at(st, "a", nil), Outcome{Errored: true}); d.Action != Failed {
		t.Fatalf("failure to end = %+v", d)
	}
	if d := Next(at(st, "c", nil), Outcome{}); d.Action != Finish {
		t.Fatalf("success to end = %+v", d)
	}
}

func TestReadVerdict(t *testing.T) {
	for _, c := range []struct {
		out  string
		want Verdict
	}{
		{"looks right\nPASS", Pass},
		{"looks right\n  pass.  \n\n", Pass},
		{"**FAIL**", Fail},
		{"`FAIL`", Fail},
		{"PASS\nbut then more words", Unreported},
		{"PASSED", Unreported},
		{"", Unreported},
		{`{"passed": true}`, Pass},
		{`{"passed": false, "verdict": "PASS"}`, Fail},
		{"Here is my report:\n```json\n{\"verdict\": \"fail\", \"notes\": \"x\"}\n```", Fail},
		{`{"status": "PASS"}`, Pass},
		{`{"result": "maybe"}`, Unreported},
	} {
		if got := ReadVerdict(c.out, "PASS", "FAIL"); got != c.want {
			t.Errorf("ReadVerdict(%q) = %v, want %v", c.out, got, c.want)
		}
	}
}

// FuzzReadVerdict: any output reads as one of the three verdicts, without
// a panic, and a line holding only a sentinel, appended last, decides.
func FuzzReadVerdict(f *testing.F) {
	for _, seed := range []string{"PASS", "x\nFAIL", "{\"passed\":true}", "```json\n{\"verdict\":\"FAIL\"}\n```", "", "\n\n", "{", "```"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, out string) {
		v := ReadVerdict(out, "PASS", "FAIL")
		if v != Pass && v != Fail && v != Unreported {
			t.Fatalf("verdict %d", v)
		}
		if structured(out, "PASS", "FAIL") != Unreported {
			return // a JSON report speaks first
		}
		if got := ReadVerdict(out+"\nFAIL\n", "PASS", "FAIL"); got != Fail && structured(out+"\nFAIL\n", "PASS", "FAIL") == Unreported {
			t.Fatalf("a last FAIL line read as %v after %q", got, out)
		}
	})
}

func TestBeforeLaunch(t *testing.T) {
	st := fixLoop()
	runs := func(n int) []domain.StepRun { return make([]domain.StepRun, n) }
	for _, c := range []struct {
		budget domain.WorkflowBudget
		runs   int
		spent  Spent
		want   string
	}{
		{domain.WorkflowBudget{}, 49, Spent{Tokens: 1 << 40, Active: 1000 * time.Hour}, ""},
		{domain.WorkflowBudget{}, 50, Spent{}, "step run limit reached: 50 launches (at most 50 per execution)"},
		{domain.WorkflowBudget{MaxSteps: 3}, 2, Spent{}, ""},
		{domain.WorkflowBudget{MaxSteps: 3}, 3, Spent{}, "budget exhausted: 4 of 3 steps"},
		{domain.WorkflowBudget{MaxTokens: 1000}, 1, Spent{Tokens: 1200}, "budget exhausted: 1200 of 1000 tokens"},
		{domain.WorkflowBudget{MaxMinutes: 5}, 1, Spent{Active: 5*time.Minute + time.Second}, "budget exhausted: 5 of 5 minutes"},
		{domain.WorkflowBudget{MaxMinutes: 5}, 1, Spent{Active: 4 * time.Minute}, ""},
	} {
		st.Budget, st.StepRuns = c.budget, runs(c.runs)
		if got := BeforeLaunch(st, c.spent); got != c.want {
			t.Errorf("%+v after %d runs, %+v spent: %q, want %q", c.budget, c.runs, c.spent, got, c.want)
		}
	}
}

func TestProgressAndStepTurn(t *testing.T) {
	st := fixLoop()
	st.Input = "Add a dark theme."
	if got := Progress(at(st, "v", nil)); got != "step 3/3 (verify)" {
		t.Fatalf("progress = %q", got)
	}
	if got := StepTurn(st, st.Steps[0], ""); got != "Add a dark theme.\n\nplan it" {
		t.Fatalf("first turn = %q", got)
	}
	st.StepRuns = []domain.StepRun{{StepID: "p"}}
	if got := StepTurn(st, st.Steps[1], ""); got != "do it" {
		t.Fatalf("second turn = %q", got)
	}
	got := StepTurn(st, st.Steps[2], "Retrying: the last attempt failed.")
	if !strings.HasPrefix(got, "Retrying: the last attempt failed.\n\ncheck it\n\n") || !strings.Contains(got, "only PASS") || !strings.Contains(got, "FAIL") {
		t.Fatalf("gate retry turn = %q", got)
	}
}

func TestValidateAndAssignIDs(t *testing.T) {
	n := 0
	newID := func() string { n++; return "id" + string(rune('0'+n)) }
	steps := AssignIDs([]domain.WorkflowStep{
		{Name: "Plan", Agent: "a", Prompt: "p"},
		{ID: "kept", Name: "Exec", Agent: "a", Prompt: "x"},
		{Name: "Verify", Agent: "a", Prompt: "v", Gate: true, OnFailure: "exec"},
	}, newID)
	if steps[0].ID != "id1" || steps[1].ID != "kept" || steps[2].ID != "id2" || steps[2].OnFailure != "kept" {
		t.Fatalf("ids = %+v", steps)
	}
	ok := domain.WorkflowSpec{Name: "build", Description: "plan, build, check", Steps: steps}
	if err := Validate(ok, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	bad := domain.WorkflowSpec{Name: " ", Steps: []domain.WorkflowStep{
		{ID: "1", Name: "one", Agent: "a", Prompt: "p", OnSuccess: domain.WorkflowEnd},
		{ID: "2", Name: "ONE", Agent: "ghost", Prompt: "p", OnFailure: "nowhere"},
		{ID: "3", Name: "End", Agent: "a", Prompt: "", Gate: true, GatePass: "ok", GateFail: "OK"},
	}, Budget: domain.WorkflowBudget{MaxTokens: -1, MaxSteps: 51}}
	err := Validate(bad, func(id string) bool { return id == "a" })
	fields := errs.FieldsOf(err)
	for _, k := range []string{"name", "description", "steps[1].name", "steps[1].agent", "steps[1].on_failure", "steps[2].name",
		"steps[2].prompt", "steps[2].gate_fail", "budget.max_tokens", "budget.max_steps"} {
		if fields[k] == "" {
			t.Errorf("no reason for %s (have %v)", k, fields)
		}
	}
	if !strings.Contains(fields["steps[1].name"], "also the name of step 1") {
		t.Errorf("duplicate reason = %q", fields["steps[1].name"])
	}
	// Step 2 follows an "end" edge, so nothing reaches it.
	lone := domain.WorkflowSpec{Name: "w", Description: "d", Steps: []domain.WorkflowStep{
		{ID: "1", Name: "one", Agent: "a", Prompt: "p", OnSuccess: domain.WorkflowEnd},
		{ID: "2", Name: "two", Agent: "a", Prompt: "p"},
	}}
	if f := errs.FieldsOf(Validate(lone, nil)); !strings.Contains(f["steps[1].name"], "unreachable") {
		t.Fatalf("unreachable not reported: %v", f)
	}
	if f := errs.FieldsOf(Validate(domain.WorkflowSpec{Name: "w", Description: "d"}, nil)); f["steps"] == "" {
		t.Fatal("no steps accepted")
	}
}

func TestLineDiff(t *testing.T) {
	cases := []struct {
		a, b string
		want string
	}{
		{"a b c", "a b c", "=a =b =c"},
		{"a b c", "a x c", "=a -b +x =c"},
		{"a c", "a b c", "=a +b =c"},
		{"a b c", "c", "-a -b =c"},
		{"", "a", "+a"},
	}
	for _, c := range cases {
		var got []string
		for _, d := range LineDiff(strings.Fields(c.a), strings.Fields(c.b)) {
			got = append(got, d.Op+d.Text)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("LineDiff(%q, %q) = %v, want %s", c.a, c.b, got, c.want)
		}
	}
}

func TestStepRunActiveLeavesOutWaits(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(min int) *time.Time { v := start.Add(time.Duration(min) * time.Minute); return &v }
	cases := []struct {
		r    domain.StepRun
		now  time.Time
		want time.Duration
	}{
		{domain.StepRun{StartedAt: start}, *at(3), 3 * time.Minute},
		{domain.StepRun{StartedAt: start, EndedAt: at(10), WaitedMS: (7 * time.Minute).Milliseconds()}, *at(20), 3 * time.Minute},
		{domain.StepRun{StartedAt: start, PausedAt: at(2)}, *at(60), 2 * time.Minute},
		{domain.StepRun{StartedAt: start, EndedAt: at(30), PausedAt: at(4), WaitedMS: (1 * time.Minute).Milliseconds()}, *at(30), 3 * time.Minute},
	}
	for i, c := range cases {
		if got := c.r.Active(c.now); got != c.want {
			t.Errorf("case %d: Active = %v, want %v", i, got, c.want)
		}
	}
}

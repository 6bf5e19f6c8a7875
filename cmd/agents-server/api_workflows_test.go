package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/ports/porttest"
)

// Workflows against the scripted model: one agent per role, each on its
// own scripted model, so each step's turn is answered by its role's script.

// wfSetup is a member with a chat agent (the conversation's, which reads
// the wake-up) and plan / build / verify agents, and a conversation.
type wfSetup struct {
	h       *harness
	model   *scripted.Server
	token   string
	agents  map[string]string // role → agent id
	session string
	url     string // the scripted model's
}

func newWorkflowSetup(t *testing.T, cfg config) wfSetup {
	h := startServer(t, cfg)
	model, url := startScripted(t)
	tok := h.member("wf")
	p := h.createProvider(tok, protocols(url)["openai-responses"])
	s := wfSetup{h: h, model: model, token: tok, agents: map[string]string{}, url: url}
	for _, role := range []string{"chat", "plan", "build", "verify"} {
		s.agents[role] = h.createAgent(tok, map[string]any{"name": role, "model": "wf-" + role, "provider_id": p.ID}).ID
	}
	s.script("chat", scripted.Exchange{When: "[task-notification]", Steps: []scripted.Step{{Text: "Noted the workflow's result."}}},
		scripted.Exchange{Steps: []scripted.Step{{EchoInput: true}}})
	s.script("plan", scripted.Exchange{Steps: []scripted.Step{{Text: "The plan: write it, then test it."}}})
	s.script("build", scripted.Exchange{When: "Fix", Steps: []scripted.Step{{Text: "Fixed the failing test."}}},
		scripted.Exchange{Steps: []scripted.Step{{Text: "Implemented the plan."}}})
	s.session = h.createSession(tok, map[string]any{"agent_config_id": s.agents["chat"], "name": "wf"}).ID
	return s
}

// script sets a role's model script.
func (s wfSetup) script(role string, ex ...scripted.Exchange) {
	s.model.SetScript("wf-"+role, scripted.Script{Exchanges: ex})
}

// editAgent changes a role's agent.
func (s wfSetup) editAgent(role string, edit func(*domain.AgentSpec)) {
	s.h.t.Helper()
	var a httpapi.AgentView
	s.h.call("GET", "/api/v1/agents/"+s.agents[role], s.token, nil).want(s.h.t, 200).decode(s.h.t, &a)
	edit(&a.AgentSpec)
	s.h.call("PUT", "/api/v1/agents/"+s.agents[role], s.token, a.AgentSpec).want(s.h.t, 200)
}

// step is a workflow step on a role's agent.
func (s wfSetup) step(name, role, prompt string, extra ...map[string]any) map[string]any {
	st := map[string]any{"name": name, "agent": s.agents[role], "prompt": prompt}
	for _, e := range extra {
		for k, v := range e {
			st[k] = v
		}
	}
	return st
}

func (s wfSetup) create(name string, steps []map[string]any, budget map[string]any) httpapi.WorkflowView {
	s.h.t.Helper()
	var w httpapi.WorkflowView
	body := map[string]any{"name": name, "description": name + " things", "steps": steps}
	if budget != nil {
		body["budget"] = budget
	}
	s.h.call("POST", "/api/v1/workflows", s.token, body).want(s.h.t, 201).decode(s.h.t, &w)
	return w
}

func (s wfSetup) start(workflowID, input string) httpapi.TaskView {
	s.h.t.Helper()
	var t httpapi.TaskView
	s.h.call("POST", "/api/v1/workflows/"+workflowID+"/runs", s.token, map[string]any{"session_id": s.session, "input": input}).
		want(s.h.t, 201).decode(s.h.t, &t)
	if t.Kind != domain.TaskWorkflow {
		s.h.t.Fatalf("started %+v", t)
	}
	return t
}

func (s wfSetup) task(id string) (httpapi.TaskView, domain.WorkflowState) {
	s.h.t.Helper()
	var t httpapi.TaskView
	s.h.call("GET", "/api/v1/tasks/"+id, s.token, nil).want(s.h.t, 200).decode(s.h.t, &t)
	var st domain.WorkflowState
	if err := json.Unmarshal(t.State, &st); err != nil {
		s.h.t.Fatalf("state of %s: %v (%s)", id, err, t.State)
	}
	return t, st
}

// until waits for the execution to satisfy ok and returns it.
func (s wfSetup) until(id string, ok func(httpapi.TaskView, domain.WorkflowState) bool) (httpapi.TaskView, domain.WorkflowState) {
	s.h.t.Helper()
	var t httpapi.TaskView
	var st domain.WorkflowState
	waitFor(s.h.t, func() bool { t, st = s.task(id); return ok(t, st) })
	return t, st
}

// ended waits for the execution's terminal status.
func (s wfSetup) ended(id string) (httpapi.TaskView, domain.WorkflowState) {
	s.h.t.Helper()
	return s.until(id, func(t httpapi.TaskView, _ domain.WorkflowState) bool { return t.Status.Terminal() })
}

// endings lists the launch log as "step:ending".
func endings(st domain.WorkflowState) []string {
	names := map[string]string{}
	for _, s := range st.Steps {
		names[s.ID] = s.Name
	}
	var out []string
	for _, r := range st.StepRuns {
		out = append(out, names[r.StepID]+":"+r.Ending)
	}
	return out
}

// requestsTo are the request bodies one role's model received.
func (s wfSetup) requestsTo(role string) []string {
	var out []string
	for _, r := range s.model.Requests() {
		if r.Model == "wf-"+role {
			out = append(out, string(r.Body))
		}
	}
	return out
}

// woken waits until the conversation was woken with an execution's result
// (its own run, which starts a moment after the execution ends) and that
// run is over: only then is the conversation free for another start.
func (s wfSetup) woken(t *testing.T) {
	t.Helper()
	waitFor(t, func() bool {
		// The wake-up's own message begins with the prefix; spawn_task's
		// description and answers name it mid-sentence, so every chat
		// request holds "[task-notification]" somewhere.
		notified := slices.ContainsFunc(s.requestsTo("chat"), func(r string) bool { return strings.Contains(r, `"`+tasks.NotificationPrefix) })
		_, busy := workbenchparts.Of(s.h.app.wb).Runs.Hub().Busy(s.session)
		return notified && !busy
	})
}

// fixLoop is plan → implement → verify (a gate) → on FAIL fix → verify.
func (s wfSetup) fixLoop(name string, budget map[string]any) httpapi.WorkflowView {
	return s.create(name, []map[string]any{
		s.step("plan", "plan", "Plan the change."),
		s.step("implement", "build", "Implement the plan."),
		s.step("verify", "verify", "Run the tests.", map[string]any{"gate": true, "on_success": "end", "on_failure": "fix"}),
		s.step("fix", "build", "Fix what the tests found.", map[string]any{"on_success": "verify"}),
	}, budget)
}

func TestWorkflowLoopsThroughAFailedGateToAPass(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	s.script("verify", scripted.Exchange{Times: 1, Steps: []scripted.Step{{Text: "2 tests fail.\nFAIL"}}},
		scripted.Exchange{Steps: []scripted.Step{{Text: "All 14 tests pass.\n\nPASS\n"}}})
	w := s.fixLoop("build", nil)
	started := s.start(w.ID, "Add a --verbose flag")
	task, st := s.ended(started.TaskID)
	if task.Status != domain.TaskCompleted || !strings.Contains(task.Result, "All 14 tests pass") {
		t.Fatalf("execution = %s %q", task.Status, task.Result)
	}
	want := []string{"plan:completed", "implement:completed", "verify:fail", "fix:completed", "verify:pass"}
	if got := endings(st); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("launch log = %v, want %v", got, want)
	}
	if st.Laps[st.Steps[3].ID+"→"+st.Steps[2].ID] != 1 || len(st.Laps) != 1 {
		t.Fatalf("laps = %v", st.Laps)
	}
	for _, r := range st.StepRuns {
		if r.RunID == "" || r.EndedAt == nil || r.Attempt != 1 {
			t.Fatalf("step run %+v", r)
		}
	}
	// The brief leads the first step only; the gate is told how to report.
	if plan := s.requestsTo("plan"); len(plan) != 1 || !strings.Contains(plan[0], "Add a --verbose flag") {
		t.Fatalf("plan requests = %v", plan)
	}
	verify := s.requestsTo("verify")
	if len(verify) != 2 || !strings.Contains(verify[0], "End your answer with a line holding only PASS") {
		t.Fatalf("verify requests = %d", len(verify))
	}
	if build := s.requestsTo("build"); len(build) != 2 || strings.Count(build[1], "Add a --verbose flag") != 1 {
		t.Fatalf("build requests = %d", len(build))
	}
	// Every step is a run on the one hidden session: the transcript is the
	// data flow.
	if task.ChildSessionID == "" {
		t.Fatal("no step session")
	}
	var users int
	for _, e := range s.h.messages(s.token, task.ChildSessionID, "") {
		if e.Kind == domain.KindItem && e.Source == domain.SourceUser {
			users++
		}
	}
	if users != 5 {
		t.Fatalf("step session has %d step turns, want 5", users)
	}
	// The start is noted for people in the conversation, and the result
	// comes back as one wake-up.
	var note *httpapi.EntryView
	msgs := s.h.messages(s.token, s.session, "")
	for i, e := range msgs {
		if e.Display != nil && e.Display.Kind == "workflow_started" {
			note = &msgs[i]
		}
	}
	if note == nil || note.Display.Extra["task_id"] != task.TaskID || note.Display.Extra["brief"] != "Add a --verbose flag" ||
		note.Display.Title != "build" || note.Display.Extra["started_by"] != "wf" {
		t.Fatalf("workflow_started note = %+v", note)
	}
	waitFor(t, func() bool {
		for _, e := range s.h.messages(s.token, s.session, "") {
			if e.Source == domain.SourceTaskNotification {
				return true
			}
		}
		return false
	})
}

func TestWorkflowLapBoundEndsANonConvergingLoop(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	s.script("verify", scripted.Exchange{Steps: []scripted.Step{{Text: "Still failing.\nFAIL"}}})
	w := s.fixLoop("stuck", map[string]any{"max_laps": 2})
	task, st := s.ended(s.start(w.ID, "Make it pass").TaskID)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "loop bound reached: fix → verify looped 2 times") {
		t.Fatalf("execution = %s %q", task.Status, task.Result)
	}
	want := "plan:completed,implement:completed,verify:fail,fix:completed,verify:fail,fix:completed,verify:fail,fix:completed"
	if got := strings.Join(endings(st), ","); got != want {
		t.Fatalf("launch log = %s", got)
	}
	// One more lap could only end the same way: a retry is refused.
	s.h.call("POST", "/api/v1/tasks/"+task.TaskID+"/retry", s.token, nil).wantErr(t, 409, "conflict")
}

func TestWorkflowGateWithoutAVerdictFailsSayingSo(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	s.script("verify", scripted.Exchange{Steps: []scripted.Step{{Text: "I looked at it and it seems fine overall."}}})
	w := s.fixLoop("vague", nil)
	task, st := s.ended(s.start(w.ID, "Check it").TaskID)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result, `the gate "verify" reported no verdict`) ||
		!strings.Contains(task.Result, "step 3/4 (verify)") {
		t.Fatalf("execution = %s %q", task.Status, task.Result)
	}
	if got := strings.Join(endings(st), ","); got != "plan:completed,implement:completed,verify:failed" {
		t.Fatalf("launch log = %s", got)
	}
}

func TestWorkflowBudgetsStopAnExecutionNamingTheBound(t *testing.T) {
	t.Parallel()
	linear := func(s wfSetup) []map[string]any {
		return []map[string]any{s.step("one", "plan", "Step one."), s.step("two", "build", "Step two."), s.step("three", "build", "Step three.")}
	}
	t.Run("steps", func(t *testing.T) {
		t.Parallel()
		s := newWorkflowSetup(t, testConfig(t))
		w := s.create("short", linear(s), map[string]any{"max_steps": 2})
		task, st := s.ended(s.start(w.ID, "go").TaskID)
		if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "budget exhausted: 3 of 2 steps") ||
			!strings.Contains(task.Result, "step 3/3 (three)") || len(st.StepRuns) != 2 {
			t.Fatalf("execution = %s %q, %d launches", task.Status, task.Result, len(st.StepRuns))
		}
		s.h.call("POST", "/api/v1/tasks/"+task.TaskID+"/retry", s.token, nil).wantErr(t, 409, "conflict")
	})
	t.Run("tokens", func(t *testing.T) {
		t.Parallel()
		s := newWorkflowSetup(t, testConfig(t))
		s.script("plan", scripted.Exchange{Steps: []scripted.Step{{Text: "Planned.", Usage: &scripted.Usage{InputTokens: 1200, OutputTokens: 300}}}})
		w := s.create("costly", linear(s), map[string]any{"max_tokens": 1000})
		task, st := s.ended(s.start(w.ID, "go").TaskID)
		if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "budget exhausted: 1500 of 1000 tokens") || len(st.StepRuns) != 1 {
			t.Fatalf("execution = %s %q", task.Status, task.Result)
		}
	})
	t.Run("minutes", func(t *testing.T) {
		t.Parallel()
		clock := porttest.NewClock(time.Now())
		cfg := testConfig(t)
		cfg.Clock = clock
		s := newWorkflowSetup(t, cfg)
		s.script("plan", scripted.Exchange{Steps: []scripted.Step{slowText(2)}})
		w := s.create("slow", linear(s), map[string]any{"max_minutes": 1})
		started := s.start(w.ID, "go")
		s.until(started.TaskID, func(_ httpapi.TaskView, st domain.WorkflowState) bool { return len(st.StepRuns) == 1 })
		clock.Advance(90 * time.Second) // the step's own time, as the clock sees it
		task, _ := s.ended(started.TaskID)
		if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "budget exhausted: 1 of 1 minutes") {
			t.Fatalf("execution = %s %q", task.Status, task.Result)
		}
	})
	t.Run("minutes waiting for a person are free", func(t *testing.T) {
		t.Parallel()
		clock := porttest.NewClock(time.Now())
		cfg := testConfig(t)
		cfg.Clock = clock
		s := newWorkflowSetup(t, cfg)
		s.editAgent("plan", func(a *domain.AgentSpec) { a.Approval.ApproveTools = []string{"todo_write"} })
		s.script("plan", scripted.Exchange{Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"plan","status":"completed"}]}`}}},
			{Text: "Planned."}}})
		w := s.create("patient", linear(s), map[string]any{"max_minutes": 1})
		started := s.start(w.ID, "go")
		s.until(started.TaskID, func(task httpapi.TaskView, _ domain.WorkflowState) bool {
			return task.Status == domain.TaskInputRequired
		})
		clock.Advance(10 * time.Minute) // nobody decides for a while
		var list []httpapi.ApprovalView
		s.h.call("GET", "/api/v1/sessions/"+s.session+"/approvals", s.token, nil).want(t, 200).decode(t, &list)
		if len(list) != 1 || list[0].ToolName != "todo_write" {
			t.Fatalf("approvals = %+v", list)
		}
		s.h.call("POST", "/api/v1/approvals/"+list[0].ID+"/approve", s.token, nil).want(t, 200)
		task, st := s.ended(started.TaskID)
		if task.Status != domain.TaskCompleted || st.StepRuns[0].WaitedMS < (10*time.Minute).Milliseconds() {
			t.Fatalf("execution = %s %q, first step %+v", task.Status, task.Result, st.StepRuns[0])
		}
	})
}

func TestWorkflowPauseBeforeWaitsForAPerson(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	w := s.create("ship", []map[string]any{
		s.step("build", "build", "Build the release."),
		s.step("deploy", "plan", "Deploy it.", map[string]any{"pause_before": true}),
	}, nil)
	held := func(id string) httpapi.ApprovalView {
		t.Helper()
		s.until(id, func(task httpapi.TaskView, _ domain.WorkflowState) bool {
			return task.Status == domain.TaskInputRequired
		})
		var list []httpapi.ApprovalView
		s.h.call("GET", "/api/v1/sessions/"+s.session+"/approvals", s.token, nil).want(t, 200).decode(t, &list)
		if len(list) != 1 || list[0].ToolName != domain.StepApprovalTool || list[0].TaskID != id ||
			!strings.Contains(list[0].Arguments, `"step":"deploy"`) {
			t.Fatalf("approvals = %+v", list)
		}
		return list[0]
	}

	t.Run("approve", func(t *testing.T) {
		first := s.start(w.ID, "Release 1.2")
		a := held(first.TaskID)
		if n := len(s.requestsTo("plan")); n != 0 {
			t.Fatalf("the held step ran: %d requests", n)
		}
		var d httpapi.DecisionView
		s.h.call("POST", "/api/v1/approvals/"+a.ID+"/approve", s.token, nil).want(t, 200).decode(t, &d)
		if d.RunID != a.RunID {
			t.Fatalf("decision = %+v, approval run %s", d, a.RunID)
		}
		task, st := s.ended(first.TaskID)
		if task.Status != domain.TaskCompleted || strings.Join(endings(st), ",") != "build:completed,deploy:completed" ||
			st.StepRuns[1].RunID != a.RunID {
			t.Fatalf("execution = %s %v", task.Status, endings(st))
		}
		// One decision wins; a second finds nothing.
		s.h.call("POST", "/api/v1/approvals/"+a.ID+"/approve", s.token, nil).wantErr(t, 404, "not_found")
	})
	t.Run("reject", func(t *testing.T) {
		// The first one's result is being read in the conversation: a start
		// waits for that run to end.
		s.woken(t)
		second := s.start(w.ID, "Release 1.3")
		a := held(second.TaskID)
		s.h.call("POST", "/api/v1/approvals/"+a.ID+"/reject", s.token, map[string]any{"reason": "not on a Friday"}).want(t, 200)
		task, st := s.ended(second.TaskID)
		if task.Status != domain.TaskCancelled || !strings.Contains(task.Result, "not on a Friday") || len(st.StepRuns) != 1 {
			t.Fatalf("execution = %s %q", task.Status, task.Result)
		}
		var list []httpapi.ApprovalView
		s.h.call("GET", "/api/v1/sessions/"+s.session+"/approvals", s.token, nil).want(t, 200).decode(t, &list)
		if len(list) != 0 {
			t.Fatalf("approvals after the rejection = %+v", list)
		}
	})
}

func TestWorkflowRetryReRunsTheStoppedStep(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	s.script("build", scripted.Exchange{Steps: []scripted.Step{{Text: "Built.", FailTimes: 1,
		Error: &scripted.Failure{Status: 400, Message: "the build tool is missing"}}}})
	w := s.create("flaky", []map[string]any{
		s.step("plan", "plan", "Plan it."), s.step("build", "build", "Build it."), s.step("check", "verify", "Check it.", map[string]any{"gate": true}),
	}, nil)
	s.script("verify", scripted.Exchange{Steps: []scripted.Step{{Text: "Looks right.\nPASS"}}})
	first := s.start(w.ID, "Ship the fix")
	task, st := s.ended(first.TaskID)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "step 2/3 (build)") ||
		!strings.Contains(task.Result, "the build tool is missing") || strings.Join(endings(st), ",") != "plan:completed,build:failed" {
		t.Fatalf("first attempt = %s %q %v", task.Status, task.Result, endings(st))
	}
	var retried httpapi.TaskView
	s.h.call("POST", "/api/v1/tasks/"+task.TaskID+"/retry", s.token, nil).want(t, 200).decode(t, &retried)
	if retried.Attempt != 2 {
		t.Fatalf("retried = %+v", retried)
	}
	task, st = s.ended(first.TaskID)
	if task.Status != domain.TaskCompleted || strings.Join(endings(st), ",") != "plan:completed,build:failed,build:completed,check:pass" {
		t.Fatalf("after the retry = %s %v", task.Status, endings(st))
	}
	if r := st.StepRuns[2]; !r.Retry || r.Attempt != 2 {
		t.Fatalf("retried launch = %+v", r)
	}
	// The retry's turn says why, then the step's own prompt again.
	build := s.requestsTo("build")
	if len(build) != 2 || !strings.Contains(build[1], "attempt 2 of 3") || !strings.Contains(build[1], "Build it.") {
		t.Fatalf("build requests = %d", len(build))
	}
}

func TestSpawnTaskStartsAWorkflowByName(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	s.script("verify", scripted.Exchange{Steps: []scripted.Step{{Text: "Fine.\nPASS"}}})
	s.fixLoop("Build", nil)
	args, _ := json.Marshal(map[string]string{"workflow": "build", "prompt": "Add the flag"})
	s.script("chat", scripted.Exchange{When: "[task-notification]", Steps: []scripted.Step{{Text: "The workflow is done."}}},
		scripted.Exchange{When: "status", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "task_status"}}}, {Text: "Listed."}}},
		scripted.Exchange{Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "spawn_task", Arguments: string(args)}}}, {Text: "Started."}}})
	s.h.call("POST", "/api/v1/sessions/"+s.session+"/runs", s.token, map[string]any{"input": "please add the flag"}, "Prefer", "wait=30").want(t, 200)
	var list []httpapi.TaskView
	s.h.call("GET", "/api/v1/sessions/"+s.session+"/tasks", s.token, nil).want(t, 200).decode(t, &list)
	if len(list) != 1 || list[0].Kind != domain.TaskWorkflow || list[0].ToolCallID == "" || list[0].Label != "Build" {
		t.Fatalf("tasks = %+v", list)
	}
	task, _ := s.ended(list[0].TaskID)
	if task.Status != domain.TaskCompleted {
		t.Fatalf("execution = %s %q", task.Status, task.Result)
	}
	// spawn_task's description offered the workflow with its description.
	chat := s.requestsTo("chat")
	if !strings.Contains(chat[0], "Build: Build things") {
		t.Fatal("spawn_task does not list the workflows on offer")
	}
	// task_status says where an execution stands. The execution's end
	// wakes the session with a run of its own: wait until that one has
	// been made and is over, or the next run finds the session busy.
	s.woken(t)
	s.h.call("POST", "/api/v1/sessions/"+s.session+"/runs", s.token, map[string]any{"input": "status please"}, "Prefer", "wait=30").want(t, 200)
	if out := toolOutputs(s.h, s.token, s.session); !strings.Contains(out, "progress: step 3/4 (verify)") {
		t.Fatalf("task_status answered %s", out)
	}
}

func TestWorkflowDefinitionsAreValidatedAndScoped(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	h := s.h
	bad := map[string]any{"name": "end-to-end", "steps": []map[string]any{
		{"name": "one", "agent": s.agents["plan"], "prompt": "p", "on_success": "end"},
		{"name": "ONE", "agent": "nope", "prompt": "p", "on_failure": "nowhere"},
	}}
	e := h.call("POST", "/api/v1/workflows", s.token, bad).wantErr(t, 400, "validation")
	for _, f := range []string{"description", "steps[1].name", "steps[1].agent", "steps[1].on_failure"} {
		if e.Fields[f] == "" {
			t.Errorf("no reason for %s: %v", f, e.Fields)
		}
	}
	w := s.create("Release", []map[string]any{s.step("build", "build", "b"), s.step("check", "verify", "c", map[string]any{"gate": true, "on_failure": "build"})}, nil)
	if w.Steps[0].ID == "" || w.Steps[1].OnFailure != w.Steps[0].ID {
		t.Fatalf("ids and edges = %+v", w.Steps)
	}
	h.call("POST", "/api/v1/workflows", s.token, map[string]any{"name": "RELEASE", "description": "d", "steps": []map[string]any{s.step("x", "plan", "p")}}).
		wantErr(t, 409, "conflict")
	// An update keeps the ids it is sent and assigns new ones; an id that
	// is none of the workflow's is refused.
	steps := []map[string]any{
		s.step("prepare", "plan", "p"),
		{"id": w.Steps[0].ID, "name": "build", "agent": s.agents["build"], "prompt": "b2"},
		{"id": w.Steps[1].ID, "name": "check", "agent": s.agents["verify"], "prompt": "c", "gate": true, "on_failure": "build"},
	}
	var up httpapi.WorkflowView
	h.call("PUT", "/api/v1/workflows/"+w.ID, s.token, map[string]any{"name": "Release", "description": "d", "steps": steps}).want(t, 200).decode(t, &up)
	if up.Steps[1].ID != w.Steps[0].ID || up.Steps[2].ID != w.Steps[1].ID || up.Steps[0].ID == "" || up.Steps[2].OnFailure != w.Steps[0].ID {
		t.Fatalf("updated = %+v", up.Steps)
	}
	steps[0]["id"] = "forged"
	e = h.call("PUT", "/api/v1/workflows/"+w.ID, s.token, map[string]any{"name": "Release", "description": "d", "steps": steps}).wantErr(t, 400, "validation")
	if !strings.Contains(e.Fields["steps[0].id"], "not a step of this workflow") {
		t.Fatalf("forged id: %v", e.Fields)
	}
	// Another member neither sees it nor may start it; an agent a step
	// runs cannot be deleted from under it.
	other := h.member("other")
	h.call("GET", "/api/v1/workflows/"+w.ID, other, nil).wantErr(t, 404, "not_found")
	var seen []httpapi.WorkflowView
	h.call("GET", "/api/v1/workflows", other, nil).want(t, 200).decode(t, &seen)
	if len(seen) != 0 {
		t.Fatalf("other sees %+v", seen)
	}
	h.call("DELETE", "/api/v1/agents/"+s.agents["verify"], s.token, nil).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/workflows/"+w.ID+"/runs", s.token, map[string]any{"session_id": s.session}).wantErr(t, 400, "validation")
	h.call("DELETE", "/api/v1/workflows/"+w.ID, s.token, nil).want(t, 204)
	h.call("DELETE", "/api/v1/agents/"+s.agents["verify"], s.token, nil).want(t, 204)
}

func TestSaveWorkflowWaitsForApprovalWithTheDiff(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	h := s.h
	// The chat agent may author workflows.
	s.editAgent("chat", func(a *domain.AgentSpec) { a.Behavior.WorkflowAuthoring = true })
	old := s.create("release", []map[string]any{
		s.step("build", "build", "Build it."),
		s.step("check", "verify", "Check it.", map[string]any{"gate": true}),
	}, nil)
	save := func(agent string) string {
		b, _ := json.Marshal(map[string]any{"name": "Release", "description": "Build, test and check a release", "steps": []map[string]any{
			{"name": "build", "agent": "build", "prompt": "Build it."},
			{"name": "test", "agent": agent, "prompt": "Run the unit tests."},
			{"name": "check", "agent": "verify", "prompt": "Check it.", "gate": true, "on_failure": "build"},
		}})
		return string(b)
	}
	s.script("chat",
		scripted.Exchange{When: "read it", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "get_workflow", Arguments: `{"name":"release"}`}}}, {Text: "Read."}}},
		scripted.Exchange{When: "ghost", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "save_workflow", Arguments: save("ghost")}}}, {Text: "Could not."}}},
		scripted.Exchange{When: "save it", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "save_workflow", Arguments: save("build")}}}, {Text: "Saved."}}})
	var tools []httpapi.ToolView
	h.call("GET", "/api/v1/agents/"+s.agents["chat"]+"/tools", s.token, nil).want(t, 200).decode(t, &tools)
	names := ""
	for _, tl := range tools {
		names += tl.Name + " "
	}
	if !strings.Contains(names, "get_workflow") || !strings.Contains(names, "save_workflow") {
		t.Fatalf("tools = %s", names)
	}

	// get_workflow reads by names.
	h.call("POST", "/api/v1/sessions/"+s.session+"/runs", s.token, map[string]any{"input": "read it"}, "Prefer", "wait=30").want(t, 200)
	if out := toolOutputs(h, s.token, s.session); !strings.Contains(out, `"agent": "verify"`) || !strings.Contains(out, `"name": "check"`) {
		t.Fatalf("get_workflow answered %s", out)
	}
	// A save that cannot be saved is refused at once: nobody is asked.
	var run httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+s.session+"/runs", s.token, map[string]any{"input": "ghost"}, "Prefer", "wait=30").want(t, 200).decode(t, &run)
	if run.Status != "completed" || !strings.Contains(toolOutputs(h, s.token, s.session), `there is no agent named "ghost"`) {
		t.Fatalf("unsaveable save: %s %s", run.Status, toolOutputs(h, s.token, s.session))
	}
	// A save waits for the person, who reviews it drawn and diffed.
	h.call("POST", "/api/v1/sessions/"+s.session+"/runs", s.token, map[string]any{"input": "save it"}, "Prefer", "wait=30").want(t, 200).decode(t, &run)
	if run.Status != "interrupted" {
		t.Fatalf("save run = %s", run.Status)
	}
	var list []httpapi.ApprovalView
	h.call("GET", "/api/v1/sessions/"+s.session+"/approvals", s.token, nil).want(t, 200).decode(t, &list)
	if len(list) != 1 || list[0].ToolName != "save_workflow" || list[0].WorkflowPreview == nil || !list[0].WorkflowPreview.Replaces {
		t.Fatalf("approvals = %+v", list)
	}
	p := list[0].WorkflowPreview
	var added, removed []string
	for _, d := range p.Diff {
		switch d.Op {
		case domain.DiffAdded:
			added = append(added, d.Text)
		case domain.DiffRemoved:
			removed = append(removed, d.Text)
		}
	}
	if !strings.Contains(p.Definition, "2. test — agent build") || !slices.Contains(added, "2. test — agent build") ||
		!slices.Contains(removed, "2. check — agent verify") || !slices.Contains(added, "   gate: PASS → end, FAIL → build") {
		t.Fatalf("preview = %s\nadded %q\nremoved %q", p.Definition, added, removed)
	}
	// Nothing is saved before the decision.
	var cur httpapi.WorkflowView
	h.call("GET", "/api/v1/workflows/"+old.ID, s.token, nil).want(t, 200).decode(t, &cur)
	if len(cur.Steps) != 2 {
		t.Fatalf("saved before approval: %+v", cur.Steps)
	}
	h.call("POST", "/api/v1/approvals/"+list[0].ID+"/approve", s.token, nil).want(t, 200)
	waitFor(t, func() bool {
		h.call("GET", "/api/v1/workflows/"+old.ID, s.token, nil).want(t, 200).decode(t, &cur)
		return len(cur.Steps) == 3
	})
	// An update, not a second workflow: the steps it kept keep their ids.
	if cur.Steps[0].ID != old.Steps[0].ID || cur.Steps[2].ID != old.Steps[1].ID || cur.Steps[1].ID == "" ||
		cur.Steps[1].Agent != s.agents["build"] || cur.Steps[2].OnFailure != old.Steps[0].ID {
		t.Fatalf("saved = %+v (was %+v)", cur.Steps, old.Steps)
	}
	var all []httpapi.WorkflowView
	h.call("GET", "/api/v1/workflows", s.token, nil).want(t, 200).decode(t, &all)
	if len(all) != 1 {
		t.Fatalf("%d workflows after an update", len(all))
	}
}

// toolOutputs joins the tool results of a session's transcript.
func toolOutputs(h *harness, token, sessionID string) string {
	var b strings.Builder
	for _, e := range h.messages(token, sessionID, "") {
		if e.Source == domain.SourceTool {
			var out string
			json.Unmarshal(domain.ParseItem(e.Item).Output, &out)
			b.WriteString(out + "\n")
		}
	}
	return b.String()
}

func TestWorkflowCompactBeforeFoldsTheStepSessionFirst(t *testing.T) {
	t.Parallel()
	s := newWorkflowSetup(t, testConfig(t))
	h := s.h
	// The verify agent folds with a one-entry window, at a threshold it
	// would never reach by itself.
	s.editAgent("verify", func(a *domain.AgentSpec) {
		a.Compaction = domain.AgentCompaction{Enabled: true, ThresholdTokens: 1_000_000, Window: 1}
	})
	s.script("verify", scripted.Exchange{When: "Summarize this conversation so far", Steps: []scripted.Step{{Text: "Planned and built."}}},
		scripted.Exchange{Steps: []scripted.Step{{Text: "Checked.\nPASS"}}})
	w := s.create("folded", []map[string]any{
		s.step("plan", "plan", "Plan it."), s.step("build", "build", "Build it."),
		s.step("check", "verify", "Check it.", map[string]any{"gate": true, "compact_before": true}),
	}, nil)
	task, _ := s.ended(s.start(w.ID, "go").TaskID)
	if task.Status != domain.TaskCompleted {
		t.Fatalf("execution = %s %q", task.Status, task.Result)
	}
	var kinds []string
	for _, e := range h.messages(s.token, task.ChildSessionID, "") {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Contains(kinds, domain.KindCompaction) {
		t.Fatalf("no compaction in the step session: %v", kinds)
	}
	if n := len(s.requestsTo("verify")); n != 2 {
		t.Fatalf("verify model calls = %d, want the summary and the check", n)
	}
}

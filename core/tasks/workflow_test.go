package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// workflow stores a private workflow of the user's whose steps run the
// helper unless they name an agent.
func (h *harness) workflow(name string, budget domain.WorkflowBudget, steps ...domain.WorkflowStep) domain.Workflow {
	h.t.Helper()
	for i := range steps {
		if steps[i].Agent == "" {
			steps[i].Agent = h.agent.ID
		}
	}
	w, err := h.workflows.Create(h.t.Context(), h.user, domain.ScopePrivate,
		domain.WorkflowSpec{Name: name, Description: "does " + name, Steps: steps, Budget: budget})
	if err != nil {
		h.t.Fatal(err)
	}
	return w
}

// step is a workflow step whose prompt is its marker.
func step(name string) domain.WorkflowStep {
	return domain.WorkflowStep{Name: name, Prompt: "STEP " + name}
}

// start starts an execution of w on a new conversation and returns it
// once every run it set off has finished or blocked.
func (h *harness) start(w domain.Workflow, brief string) (domain.Session, domain.Task) {
	h.t.Helper()
	parent := h.session()
	task, err := h.mgr.StartWorkflow(h.t.Context(), h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: brief})
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	synctest.Wait()
	return parent, h.task(task.ID)
}

// state decodes an execution's state.
func state(t *testing.T, task domain.Task) domain.WorkflowState {
	t.Helper()
	var st domain.WorkflowState
	if err := json.Unmarshal(task.State, &st); err != nil {
		t.Fatalf("state %s: %v", task.State, err)
	}
	return st
}

// endings lists a state's step runs as step name:ending.
func endings(st domain.WorkflowState) string {
	names := map[string]string{}
	for _, s := range st.Steps {
		names[s.ID] = s.Name
	}
	var out []string
	for _, r := range st.StepRuns {
		out = append(out, names[r.StepID]+":"+r.Ending)
	}
	return strings.Join(out, " ")
}

// A workflow runs its steps in order on one hidden session — the brief
// leading the first — and ends with the last step's answer, noted in the
// conversation that started it and reported back there.
func TestAWorkflowRunsItsStepsInOrder(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("STEP research", porttest.Reply{Text: "found three things"})
		h.answer("STEP write", porttest.Reply{Text: "the report"})
		w := h.workflow("report", domain.WorkflowBudget{}, step("research"), step("write"))
		parent, task := h.start(w, "the brief")
		if task.Kind != domain.TaskWorkflow || task.Status != domain.TaskCompleted || task.Result != "the report" || task.Label != "report" {
			t.Fatalf("execution = %s %s %q", task.Kind, task.Status, task.Result)
		}
		st := state(t, task)
		if endings(st) != "research:completed write:completed" || st.StepRuns[1].EndedAt == nil {
			t.Fatalf("launch log = %s", endings(st))
		}
		in := h.inputs(task.ChildSessionID)
		if len(in) != 2 || in[0] != "the brief\n\nSTEP research" || in[1] != "STEP write" {
			t.Fatalf("the steps were told %q", in)
		}
		var note *domain.Entry
		for _, e := range h.entries(parent.ID) {
			if e.Display != nil && e.Display.Kind == "workflow_started" {
				note = &e
			}
		}
		if note == nil || note.Text != `Workflow "report" started by ada.` || note.Display.Extra["task_id"] != task.ID || note.Display.Extra["brief"] != "the brief" {
			t.Fatalf("the start's note = %+v", note)
		}
		if wake := h.wakeups(parent.ID); len(wake) != 1 {
			t.Fatalf("%d wake-ups", len(wake))
		}
		// task_status says where an execution stands.
		status := h.call(parent, tools.TaskStatus.Name, `{}`)
		if !strings.Contains(status.Output, "progress: step 2/2 (write)") {
			t.Fatalf("status = %q", status.Output)
		}
	})
}

// A start is refused, writing nothing, for what the caller cannot use, an
// empty brief, a task's conversation, a busy one, one at its live-task
// cap, or past max_runs_per_user.
func TestAWorkflowStartIsRefusedUpFront(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		h.answer("STEP only", porttest.Reply{Text: "done"})
		w := h.workflow("one", domain.WorkflowBudget{}, step("only"))
		parent := h.session()
		start := func(p domain.Principal, req tasks.WorkflowStart) error {
			_, err := h.mgr.StartWorkflow(ctx, p, req)
			return err
		}
		wantCode(t, start(h.other, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: "x"}), errs.NotFound)
		err := start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: "  "})
		if errs.FieldsOf(err)["input"] == "" {
			t.Fatalf("an empty brief: %v", err)
		}
		wantCode(t, start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: h.sessionOf(h.other).ID, Input: "x"}), errs.NotFound)
		err = start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: "x", ProjectID: "p1"})
		if errs.FieldsOf(err)["project_id"] == "" {
			t.Fatalf("a project with no binder: %v", err)
		}
		_, done := h.start(w, "x")
		wantCode(t, start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: done.ChildSessionID, Input: "x"}), errs.Conflict)

		h.answer("chat", porttest.Reply{Block: true})
		chat, err := h.runs.Start(ctx, h.user, parent.ID, runsInput("chat"))
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: "x"}), errs.Conflict)
		h.set(settings.KeyMaxRunsPerUser, "1")
		wantCode(t, start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: h.session().ID, Input: "x"}), errs.RateLimited)
		h.set(settings.KeyMaxRunsPerUser, "10")
		if err := h.runs.StopRun(ctx, chat.ID, "stopped"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		h.set(settings.KeyMaxTasksPerSession, "1")
		h.answer("slow", porttest.Reply{Block: true})
		h.spawn(parent, "slow")
		wantCode(t, start(h.user, tasks.WorkflowStart{WorkflowID: w.ID, SessionID: parent.ID, Input: "x"}), errs.Conflict)
		if list, _ := h.taskStore.ListSessionTasks(ctx, parent.ID); len(list) != 1 {
			t.Fatalf("refused starts wrote %d tasks", len(list)-1)
		}
	})
}

// A step whose run fails fails the execution, saying at which step and
// why; a retry resumes at that step, told why it runs again.
func TestAFailedStepCanBeRetried(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("STEP fetch", porttest.Reply{Text: "fetched"})
		h.answer("STEP parse", porttest.Fail(ports.ModelInvalid, "bad input"), porttest.Reply{Text: "parsed"})
		w := h.workflow("etl", domain.WorkflowBudget{}, step("fetch"), step("parse"))
		_, task := h.start(w, "go")
		if task.Status != domain.TaskFailed || !strings.HasPrefix(task.Result, `The workflow "etl" stopped at step 2/2 (parse): the step "parse" failed (`) {
			t.Fatalf("execution = %s %q", task.Status, task.Result)
		}
		if _, err := h.mgr.Retry(t.Context(), h.user, task.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := h.task(task.ID)
		st := state(t, got)
		if got.Status != domain.TaskCompleted || got.Result != "parsed" || endings(st) != "fetch:completed parse:failed parse:completed" ||
			!st.StepRuns[2].Retry || st.StepRuns[2].Attempt != 2 {
			t.Fatalf("after the retry = %s %q, log %s", got.Status, got.Result, endings(st))
		}
		in := h.inputs(task.ChildSessionID)
		if last := in[len(in)-1]; !strings.HasPrefix(last, "This is attempt 2 of 3 of this workflow: it stopped at this step (failed).") ||
			!strings.HasSuffix(last, "STEP parse") {
			t.Fatalf("the retried step was told %q", last)
		}
	})
}

// A gate's verdict picks its edge: a failure handler is told what failed,
// and a backward edge taken past its lap bound ends the execution on a
// bound, which no retry can get past.
func TestAGateLoopsWithinItsBound(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("STEP build", porttest.Reply{Text: "built"})
		h.answer("STEP check", porttest.Reply{Text: "nope\nFAIL"})
		fix := step("build")
		check := step("check")
		check.Gate, check.OnFailure = true, "build"
		w := h.workflow("ci", domain.WorkflowBudget{MaxLaps: 2}, fix, check)
		_, task := h.start(w, "go")
		st := state(t, task)
		if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "loop bound reached: check → build looped 2 times") || st.Bound == "" {
			t.Fatalf("execution = %s %q bound %q", task.Status, task.Result, st.Bound)
		}
		if endings(st) != "build:completed check:fail build:completed check:fail build:completed check:fail" {
			t.Fatalf("launch log = %s", endings(st))
		}
		if in := h.inputs(task.ChildSessionID); !strings.HasSuffix(in[1], "End your answer with a line holding only PASS if the check passed, or FAIL if it did not.") {
			t.Fatalf("the gate was told %q", in[1])
		}
		_, err := h.mgr.Retry(t.Context(), h.user, task.ID)
		wantCode(t, err, errs.Conflict)
		if !strings.Contains(errs.MessageOf(err), "ended on a bound") {
			t.Fatalf("retry = %v", err)
		}
	})
}

// A step that fails hands over to its on_failure step, which is told what
// failed and why.
func TestAFailureHandlerIsToldWhatFailed(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("STEP deploy", porttest.Fail(ports.ModelInvalid, "quota"))
		h.answer("STEP rollback", porttest.Reply{Text: "rolled back"})
		deploy := step("deploy")
		deploy.OnSuccess, deploy.OnFailure = domain.WorkflowEnd, "rollback"
		w := h.workflow("ship", domain.WorkflowBudget{}, deploy, step("rollback"))
		_, task := h.start(w, "go")
		if task.Status != domain.TaskCompleted || task.Result != "rolled back" {
			t.Fatalf("execution = %s %q", task.Status, task.Result)
		}
		in := h.inputs(task.ChildSessionID)
		if !strings.HasPrefix(in[1], `The step "deploy" failed (`) || !strings.Contains(in[1], "You are running because of that failure") {
			t.Fatalf("the handler was told %q", in[1])
		}
	})
}

// A budget is checked before every launch: past it the execution ends on
// the bound, and a retry is refused.
func TestABudgetStopsTheNextLaunch(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("STEP a", porttest.Reply{Text: "a done", Usage: domain.Usage{InputTokens: 80, OutputTokens: 40}})
		h.answer("STEP b", porttest.Reply{Text: "b done"})
		for _, c := range []struct {
			budget domain.WorkflowBudget
			why    string
		}{
			{domain.WorkflowBudget{MaxSteps: 1}, "budget exhausted: 2 of 1 steps"},
			{domain.WorkflowBudget{MaxTokens: 100}, "budget exhausted: 120 of 100 tokens"},
		} {
			w := h.workflow(fmt.Sprintf("bounded %d", c.budget.MaxSteps), c.budget, step("a"), step("b"))
			_, task := h.start(w, "go")
			if task.Status != domain.TaskFailed || !strings.HasSuffix(task.Result, "at step 2/2 (b): "+c.why) || state(t, task).Bound != c.why {
				t.Fatalf("%+v: execution = %s %q", c.budget, task.Status, task.Result)
			}
			if _, err := h.mgr.Retry(t.Context(), h.user, task.ID); errs.CodeOf(err) != errs.Conflict {
				t.Fatalf("%+v: retry = %v", c.budget, err)
			}
		}
	})
}

// A pause_before step holds the execution for a person: an approval in
// the conversation's list; approving runs the step, rejecting cancels the
// execution, and only the first decision counts.
func TestAStepWaitsForAPersonBeforeItRuns(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint("approve=", approve), func(t *testing.T) {
			bubble(t, func(t *testing.T, h *harness) {
				h.answer("STEP draft", porttest.Reply{Text: "drafted"})
				h.answer("STEP publish", porttest.Reply{Text: "published"})
				publish := step("publish")
				publish.PauseBefore = true
				w := h.workflow("post", domain.WorkflowBudget{}, step("draft"), publish)
				_, task := h.start(w, "go")
				if task.Status != domain.TaskInputRequired || task.PendingCallID != "step_"+task.RunID {
					t.Fatalf("held = %s waiting on %q", task.Status, task.PendingCallID)
				}
				approvals, err := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID)
				if err != nil || len(approvals) != 1 || approvals[0].ToolName != domain.StepApprovalTool ||
					!strings.Contains(approvals[0].Arguments, `"progress":"step 2/2 (publish)"`) {
					t.Fatalf("approvals = %+v, %v", approvals, err)
				}
				run, err := h.runs.Decide(t.Context(), h.user, approvals[0].ID, approve, "", " not today ")
				if err != nil || run.ID != task.RunID {
					t.Fatalf("decide = %+v, %v", run, err)
				}
				synctest.Wait()
				got := h.task(task.ID)
				switch {
				case approve && (got.Status != domain.TaskCompleted || got.Result != "published"):
					t.Fatalf("approved = %s %q", got.Status, got.Result)
				case !approve && (got.Status != domain.TaskCancelled || !strings.HasSuffix(got.Result, "a person rejected the step: not today")):
					t.Fatalf("rejected = %s %q", got.Status, got.Result)
				}
				if _, err := h.mgr.DecideStep(t.Context(), approvals[0], true, ""); !errs.Is(err, errs.NotFound) {
					t.Fatalf("a second decision: %v", err)
				}
			})
		})
	}
}

// An approval that would start a step past max_runs_per_user is refused
// and stays pending, for a later try.
func TestAStepApprovalPastTheRunCapStaysPending(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		first := step("first")
		first.PauseBefore = true
		h.answer("STEP first", porttest.Reply{Text: "done"})
		w := h.workflow("held", domain.WorkflowBudget{}, first)
		_, task := h.start(w, "go")
		approvals, _ := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID)
		if len(approvals) != 1 {
			t.Fatalf("approvals = %+v", approvals)
		}
		h.set(settings.KeyMaxRunsPerUser, "1")
		h.answer("chat", porttest.Reply{Block: true})
		if _, err := h.runs.Start(t.Context(), h.user, h.session().ID, runsInput("chat")); err != nil {
			t.Fatal(err)
		}
		_, err := h.runs.Decide(t.Context(), h.user, approvals[0].ID, true, "", "")
		wantCode(t, err, errs.RateLimited)
		if got, _ := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID); len(got) != 1 {
			t.Fatalf("the refused approval went: %+v", got)
		}
		_, err = h.mgr.DecideStep(t.Context(), domain.Approval{ID: "nope", RunID: "no-run"}, true, "")
		wantCode(t, err, errs.NotFound)
	})
}

// Stopping a held execution cancels it and takes its step approval.
func TestStoppingAHeldWorkflowTakesItsApproval(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		first := step("first")
		first.PauseBefore = true
		w := h.workflow("held", domain.WorkflowBudget{}, first)
		_, task := h.start(w, "go")
		if _, err := h.mgr.Stop(t.Context(), h.user, task.ID); err != nil {
			t.Fatal(err)
		}
		if got := h.task(task.ID); got.Status != domain.TaskCancelled {
			t.Fatalf("stopped = %s", got.Status)
		}
		if got, _ := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID); len(got) != 0 {
			t.Fatalf("approvals left: %+v", got)
		}
	})
}

// A step run's wait for a person's decision costs the max_minutes budget
// nothing: the launch log times it apart.
func TestAWaitForADecisionIsNotSpent(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		gated := h.newAgent(h.user, domain.AgentSpec{Name: "gated", Approval: domain.AgentApproval{ApproveTools: []string{"todo_write"}}})
		h.answer("STEP plan", porttest.Reply{Calls: []porttest.Call{{Name: "todo_write", Arguments: `{"todos":[]}`}}}, porttest.Reply{Text: "planned"})
		plan := step("plan")
		plan.Agent = gated.ID
		w := h.workflow("wait", domain.WorkflowBudget{MaxMinutes: 1}, plan)
		_, task := h.start(w, "go")
		if task.Status != domain.TaskInputRequired || state(t, task).StepRuns[0].PausedAt == nil {
			t.Fatalf("paused = %s %s", task.Status, task.State)
		}
		h.clock.Advance(5 * time.Minute)
		approvals, _ := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID)
		if _, err := h.runs.Decide(t.Context(), h.user, approvals[0].ID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := h.task(task.ID)
		st := state(t, got)
		if got.Status != domain.TaskCompleted || st.StepRuns[0].WaitedMS != (5*time.Minute).Milliseconds() || st.StepRuns[0].PausedAt != nil {
			t.Fatalf("after the decision = %s, waited %dms", got.Status, st.StepRuns[0].WaitedMS)
		}
	})
}

// spawn_task may name a workflow — never with an agent, since steps name
// their own — and its description lists the workflows on offer.
func TestSpawnTaskStartsANamedWorkflow(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		if spec := h.mgr.SpawnSpec(t.Context(), h.user.User.ID); spec != "" {
			t.Fatalf("with no workflows: %q", spec)
		}
		h.answer("STEP only", porttest.Reply{Text: "workflow done"})
		h.workflow("Triage", domain.WorkflowBudget{}, step("only"))
		if spec := h.mgr.SpawnSpec(t.Context(), h.user.User.ID); !strings.HasSuffix(spec, "\n- Triage: does Triage") {
			t.Fatalf("spawn spec = %q", spec)
		}
		if a := h.call(parent, tools.SpawnTask.Name, `{"prompt":"x","workflow":"triage","agent":"helper"}`); !strings.Contains(a.Output, "omit agent") {
			t.Fatalf("a workflow with an agent = %+v", a)
		}
		if a := h.call(parent, tools.SpawnTask.Name, `{"prompt":"x","workflow":"nope"}`); !strings.Contains(a.Output, `the workflows are "Triage"`) {
			t.Fatalf("an unknown workflow = %+v", a)
		}
		a := h.callAs(parent, h.agent, "call-wf", tools.SpawnTask.Name, `{"prompt":"the brief","workflow":"triage"}`)
		synctest.Wait()
		task := h.task(a.Display.Extra["task_id"])
		if task.Kind != domain.TaskWorkflow || task.Label != "Triage" || task.Status != domain.TaskCompleted || task.ToolCallID != "call-wf" {
			t.Fatalf("execution = %+v", task)
		}
		if in := h.inputs(task.ChildSessionID); in[0] != "the brief\n\nSTEP only" {
			t.Fatalf("the step was told %q", in)
		}
		if cards := h.cards(parent.ID); len(cards) != 1 || cards[0].TargetCallID != "call-wf" {
			t.Fatalf("cards = %+v", cards)
		}
	})
}

// A restart fails an execution at the step it was running; a shutdown
// mid-step fails it saying so; a stop mid-step cancels it.
func TestAnExecutionCutShortSaysWhere(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		h.answer("STEP long", porttest.Reply{Block: true})
		w := h.workflow("long", domain.WorkflowBudget{}, step("long"))
		_, stopped := h.start(w, "go")
		if _, err := h.mgr.Stop(ctx, h.user, stopped.ID); err != nil {
			t.Fatal(err)
		}
		_, cut := h.start(w, "go")
		// The process dies: the run engine fails its runs (not modelled
		// here), and the sweep fails the task at its step.
		if err := h.mgr.Recover(ctx, []string{cut.RunID}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		got := h.task(cut.ID)
		if got.Status != domain.TaskFailed || got.Result != `The workflow "long" stopped at step 1/1 (long): the server restarted while it was working` ||
			endings(state(t, got)) != "long:failed" {
			t.Fatalf("after the sweep = %s %q, log %s", got.Status, got.Result, endings(state(t, got)))
		}
		_, down := h.start(w, "go")
		shutdown, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		h.runs.Shutdown(shutdown)
		synctest.Wait()
		if got := h.task(down.ID); got.Status != domain.TaskFailed || !strings.HasSuffix(got.Result, "the server shut down while the step was running") {
			t.Fatalf("after a shutdown = %s %q", got.Status, got.Result)
		}
		if got := h.task(stopped.ID); got.Status != domain.TaskCancelled || endings(state(t, got)) != "long:" {
			t.Fatalf("stopped = %s, log %s", got.Status, endings(state(t, got)))
		}
	})
}

// A workflow whose driver died between two steps — the first step's end
// stored, the execution advanced to its next step, whose launch was never
// made — waits queued with no run, which no failover of runs finds. Its
// queue stalls: PumpStalled (a failover's) goes on with the next step, as
// the driver would have, and the execution completes.
func TestAWorkflowStalledBetweenStepsGoesOnWhenPumped(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		// The first step answers only once the start has returned: the
		// start's own pump, still looking, would launch the next step.
		hold := make(chan struct{})
		h.answer("STEP research", porttest.Reply{Text: "found three things", Hold: hold})
		h.answer("STEP write", porttest.Reply{Text: "the report"})
		w := h.workflow("report", domain.WorkflowBudget{}, step("research"), step("write"))
		h.ends.deaf.Store(true)
		parent, task := h.start(w, "the brief")
		close(hold)
		synctest.Wait()
		h.ends.deaf.Store(false)
		task = h.task(task.ID)
		if task.Status != domain.TaskWorking || !task.Queued() || endings(state(t, task)) != "research:completed" {
			t.Fatalf("between steps the execution is %s queued %v at %s", task.Status, task.Queued(), endings(state(t, task)))
		}
		// Queued since the cutoff, it may still be its launcher's to launch.
		if n, err := h.mgr.PumpStalled(ctx, task.UpdatedAt); err != nil || n != 0 {
			t.Fatalf("a fresh queue was pumped: %d, %v", n, err)
		}
		synctest.Wait()
		if got := h.task(task.ID); !got.Queued() {
			t.Fatalf("a fresh queue was launched: %s", got.Status)
		}
		h.clock.Advance(time.Minute)
		if n, err := h.mgr.PumpStalled(ctx, h.clock.Now().Add(-30*time.Second)); err != nil || n != 1 {
			t.Fatalf("stalled queues pumped: %d, %v", n, err)
		}
		synctest.Wait()
		task = h.task(task.ID)
		if task.Status != domain.TaskCompleted || task.Result != "the report" || endings(state(t, task)) != "research:completed write:completed" {
			t.Fatalf("after the pump the execution is %s %q at %s", task.Status, task.Result, endings(state(t, task)))
		}
		// The next step went on from the first, as its driver would have
		// launched it, and the conversation that started it was told.
		if in := h.inputs(task.ChildSessionID); len(in) != 2 || in[1] != "STEP write" {
			t.Fatalf("the steps were told %q", in)
		}
		if wake := h.wakeups(parent.ID); len(wake) != 1 {
			t.Fatalf("%d wake-ups", len(wake))
		}
		if n, err := h.mgr.PumpStalled(ctx, h.clock.Now()); err != nil || n != 0 {
			t.Fatalf("a second pass pumped %d, %v", n, err)
		}
	})
}

package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/ports"
)

// This file is the workflow DRIVER: an execution is a task of kind
// workflow whose attempts' runs are its steps. The manager owns the
// lifecycle as for any task; the driver answers which step a finished run
// leads to (Ending, in the run's own end transaction) and how a step is
// launched (launchStep: budgets first, then pause_before, then the run).

// ProjectBinder binds a conversation to a project on a workflow start that
// names one, as a run carrying project_id does.
type ProjectBinder interface {
	Bind(ctx context.Context, p domain.Principal, sessionID, projectID string) (string, bool, error)
}

// WorkflowStart is a start nobody's run asked for: a person's Run… (or
// /workflow) or, later, a trigger's fire.
type WorkflowStart struct {
	WorkflowID string
	SessionID  string
	Input      string
	ProjectID  string
	// StartedBy names who asked, for the conversation's note ("" = the
	// caller).
	StartedBy string
	// TriggerID is the trigger that started it, if one did: its runs keep
	// their exec grants to themselves.
	TriggerID string
}

// StartWorkflow starts an execution of a workflow the caller may use into
// a conversation of theirs, led by the brief, and leaves a
// workflow_started note there. Returns not_found (workflow, session),
// validation (input, project), conflict (a task's conversation, busy with
// a run, or at its live-task cap), rate_limited (the caller has
// max_runs_per_user live runs) or unavailable.
func (m *Manager) StartWorkflow(ctx context.Context, p domain.Principal, req WorkflowStart) (domain.Task, error) {
	w, err := m.d.Workflows.Get(ctx, p, req.WorkflowID)
	if err != nil {
		return domain.Task{}, err
	}
	if strings.TrimSpace(req.Input) == "" {
		return domain.Task{}, errs.Field("input", "is required: the brief leads the first step, which sees nothing of the conversation")
	}
	sess, err := m.d.Sessions.Get(ctx, p, req.SessionID)
	if err != nil {
		return domain.Task{}, err
	}
	if sess.IsTaskSession() {
		return domain.Task{}, errs.E(errs.Conflict, "this is a background task's conversation: start the workflow from the conversation that owns it")
	}
	if live, busy := m.d.Hub.Busy(sess.ID); busy {
		return domain.Task{}, errs.E(errs.Conflict, "the conversation has an active run (%s); start the workflow when it ends", live)
	}
	if err := m.underCap(ctx, sess.ID); err != nil {
		return domain.Task{}, err
	}
	// Its first step is a run like any other: refused here, the refusal is
	// the caller's (a trigger's last_error), not a failed execution.
	if err := m.runs.CheckRunCap(ctx, p.User.ID); err != nil {
		return domain.Task{}, err
	}
	if req.ProjectID != "" && sess.ProjectID == "" {
		if m.d.Projects == nil {
			return domain.Task{}, errs.Field("project_id", "no such project")
		}
		if sess.ProjectID, _, err = m.d.Projects.Bind(ctx, p, sess.ID, req.ProjectID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return domain.Task{}, errs.Field("project_id", "no such project")
			}
			return domain.Task{}, err
		}
	}
	t, err := m.newExecution(ctx, sess, w, req.Input, "", "", "", w.Name, req.TriggerID != "")
	if err != nil {
		return t, err
	}
	who := req.StartedBy
	if who == "" {
		who = p.User.Username
	}
	note := domain.Entry{Kind: domain.KindAnnotation, Text: fmt.Sprintf("Workflow %q started by %s.", w.Name, who),
		Display: &domain.Display{Kind: "workflow_started", Title: w.Name, Summary: who,
			Extra: map[string]string{"task_id": t.ID, "workflow_id": w.ID, "workflow": w.Name, "brief": req.Input, "started_by": who}}}
	if req.TriggerID != "" {
		note.Display.Extra["trigger_id"] = req.TriggerID
	}
	if _, err := m.d.Sessions.Append(ctx, sess.ID, []domain.Entry{note}); err != nil {
		m.logErr("noting a workflow start failed", err, "task_id", t.ID)
	}
	// Announced once its note is written, so a follower that reads the
	// conversation on the news finds the note.
	m.changed(t)
	m.pump(ctx, sess.ID)
	return m.d.Store.FindTask(ctx, t.ID)
}

// underCap refuses a start in a conversation at its live-task cap.
func (m *Manager) underCap(ctx context.Context, sessionID string) error {
	limit, err := m.d.Settings.Int(ctx, settings.KeyMaxTasksPerSession)
	if err != nil {
		return err
	}
	if live, err := m.d.Store.CountLiveTasks(ctx, sessionID); err != nil {
		return err
	} else if live >= limit {
		return errs.E(errs.Conflict, "the conversation already has %d live tasks (max_tasks_per_session); start the workflow when one ends", live)
	}
	return nil
}

// newExecution writes an execution's hidden session and task row, its
// state a snapshot of the definition (an edit never steers it). It is
// queued and not yet announced: the caller announces and pumps. Returns
// conflict when the conversation has no room for it (checkRoom).
func (m *Manager) newExecution(ctx context.Context, parent domain.Session, w domain.Workflow, input, parentRunID, callID, askingAgent,
	label string, triggered bool) (domain.Task, error) {
	if len(w.Steps) == 0 {
		return domain.Task{}, errs.E(errs.Validation, "the workflow %q has no steps", w.Name)
	}
	first := w.Steps[0]
	admit, err := m.room(ctx)
	if err != nil {
		return domain.Task{}, err
	}
	if err := m.checkRoomFirst(ctx, parent.ID, admit); err != nil {
		return domain.Task{}, err
	}
	child, err := m.d.Sessions.CreateChild(ctx, parent, label, first.Agent)
	if err != nil {
		return domain.Task{}, err
	}
	st := domain.WorkflowState{WorkflowID: w.ID, Name: w.Name, Steps: w.Steps, Budget: w.Budget, Input: input, StepID: first.ID,
		StepRuns: []domain.StepRun{}}
	state, err := json.Marshal(st)
	if err != nil {
		return domain.Task{}, errs.Wrap(errs.Internal, err, "encode a workflow's state")
	}
	snapshot, _ := json.Marshal(inherit{AskingAgentID: askingAgent, ProjectID: parent.ProjectID, Triggered: triggered})
	now := m.d.Clock.Now()
	t := domain.Task{ID: m.d.IDs.NewID(), RunID: m.d.IDs.NewID(), OwnerID: parent.OwnerID, ParentSessionID: parent.ID,
		ParentRunID: parentRunID, ToolCallID: callID, ChildSessionID: child.ID, AgentConfigID: first.Agent, Label: label,
		Prompt: input, Kind: domain.TaskWorkflow, Attempt: 1, Status: domain.TaskWorking, Inherit: snapshot, State: state,
		CreatedAt: now, UpdatedAt: now}
	return t, m.d.Store.CreateTask(ctx, t, admit)
}

// spawnWorkflow is spawn_task told a workflow name: an execution the
// calling run asked for (its card is the execution's).
func (m *Manager) spawnWorkflow(ctx context.Context, c VerbCall, parent domain.Session, args spawnArgs) (domain.Task, error) {
	if strings.TrimSpace(args.Agent) != "" {
		return domain.Task{}, errs.E(errs.Validation, "a workflow's steps name their own agents: omit agent when you name a workflow")
	}
	w, err := m.d.Workflows.ByName(ctx, c.Run.OwnerID, args.Workflow)
	if errs.Is(err, errs.NotFound) {
		return domain.Task{}, errs.E(errs.Validation, "%s: %s", errs.MessageOf(err), m.offered(ctx, c.Run.OwnerID))
	}
	if err != nil {
		return domain.Task{}, err
	}
	label := strings.Join(strings.Fields(args.Label), " ")
	if label == "" {
		label = w.Name
	}
	t, err := m.newExecution(ctx, parent, w, args.Prompt, c.Run.ID, c.CallID, c.Agent.ID, clipLabel(label), c.Triggered)
	if err != nil {
		return t, err
	}
	m.changed(t)
	m.pump(ctx, parent.ID)
	return m.d.Store.FindTask(ctx, t.ID)
}

// offered says which workflows a user may start, by name.
func (m *Manager) offered(ctx context.Context, ownerID string) string {
	list, err := m.d.Workflows.Usable(ctx, ownerID)
	if err != nil || len(list) == 0 {
		return "no workflow is defined"
	}
	names := make([]string, len(list))
	for i, w := range list {
		names[i] = fmt.Sprintf("%q", w.Name)
	}
	return "the workflows are " + strings.Join(names, ", ")
}

// SpawnSpec is spawn_task as a run of ownerID's sees it: its description
// lists the workflows on offer, each with the description an agent
// matches a request against.
func (m *Manager) SpawnSpec(ctx context.Context, ownerID string) string {
	list, err := m.d.Workflows.Usable(ctx, ownerID)
	if err != nil || len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Workflows you can start by naming one in workflow (the prompt is then its brief, leading the first step):")
	for _, w := range list {
		fmt.Fprintf(&b, "\n- %s: %s", w.Name, strings.Join(strings.Fields(w.Description), " "))
	}
	return b.String()
}

// readState decodes an execution's state.
func readState(t domain.Task) (domain.WorkflowState, error) {
	var st domain.WorkflowState
	if err := json.Unmarshal(t.State, &st); err != nil {
		return st, errs.Wrap(errs.Internal, err, "task %s has a malformed workflow state", t.ID)
	}
	return st, nil
}

func encodeState(st domain.WorkflowState) []byte {
	b, _ := json.Marshal(st) // plain data: cannot fail
	return b
}

// stepAt returns the state's current step.
func stepAt(st domain.WorkflowState) (domain.WorkflowStep, bool) {
	for _, s := range st.Steps {
		if s.ID == st.StepID {
			return s, true
		}
	}
	return domain.WorkflowStep{}, false
}

// spent is what an execution has used: its session's model tokens, and
// the time its step runs took (a wait for a person costs nothing).
func (m *Manager) spent(ctx context.Context, t domain.Task, st domain.WorkflowState) workflows.Spent {
	var out workflows.Spent
	if sess, err := m.d.Sessions.Find(ctx, t.ChildSessionID); err == nil {
		out.Tokens = sess.Totals.SessionInputTokens + sess.Totals.SessionOutputTokens
	}
	for _, r := range st.StepRuns {
		if r.EndedAt != nil {
			out.Active += r.Active(*r.EndedAt)
		}
	}
	return out
}

// waited is a workflow step's state as its run pauses for a decision
// (status input_required) or goes on (working): the wait is timed, so it
// costs the max_minutes budget nothing. nil leaves any other task's
// state alone.
func waited(t domain.Task, runID string, status domain.TaskStatus, now time.Time) []byte {
	if t.Kind != domain.TaskWorkflow {
		return nil
	}
	st, err := readState(t)
	if err != nil {
		return nil
	}
	for i := range st.StepRuns {
		r := &st.StepRuns[i]
		if r.RunID != runID {
			continue
		}
		switch {
		case status == domain.TaskInputRequired && r.PausedAt == nil:
			r.PausedAt = &now
		case status == domain.TaskWorking && r.PausedAt != nil:
			r.WaitedMS += now.Sub(*r.PausedAt).Milliseconds()
			r.PausedAt = nil
		}
	}
	return encodeState(st)
}

// stopped says where an execution stopped and why, as its result.
func stopped(st domain.WorkflowState, why string) string {
	return fmt.Sprintf("The workflow %q stopped at %s: %s", st.Name, workflows.Progress(st), why)
}

// stepStart prepares the launch of an execution's current step: nil
// when the launch must not happen — a bound ended the execution, or the
// step waits for a person (pause_before) — having done what that takes.
func (m *Manager) stepStart(ctx context.Context, t domain.Task) *runs.BackgroundStart {
	st, err := readState(t)
	if err != nil {
		m.failLaunch(ctx, t, nil, err.Error())
		return nil
	}
	step, ok := stepAt(st)
	if !ok {
		m.failLaunch(ctx, t, &st, fmt.Sprintf("its step %q is not in the workflow", st.StepID))
		return nil
	}
	if why := workflows.BeforeLaunch(st, m.spent(ctx, t, st)); why != "" {
		st.Bound = why
		m.failLaunch(ctx, t, &st, why)
		return nil
	}
	if step.PauseBefore && st.Cleared != t.RunID {
		m.pauseStep(ctx, t, st, step)
		return nil
	}
	lead := st.Lead
	retry := false
	if n := len(st.StepRuns); n > 0 && st.StepRuns[n-1].Attempt < t.Attempt {
		retry = true
		lead = fmt.Sprintf("This is attempt %d of %d of this workflow: it stopped at this step (%s). Resume from the progress made "+
			"above rather than starting over, and finish the step.", t.Attempt, domain.MaxTaskAttempts, st.StepRuns[n-1].Ending)
	}
	input := workflows.StepTurn(st, step, lead)
	now := m.d.Clock.Now()
	// A step that follows its previous one's run carries the execution on;
	// the first, a retry's and one a person cleared start anew.
	continues := len(st.StepRuns) > 0 && !retry && st.Cleared != t.RunID
	st.Lead, st.Cleared = "", ""
	st.StepRuns = append(st.StepRuns, domain.StepRun{StepID: step.ID, RunID: t.RunID, Retry: retry, Attempt: t.Attempt, StartedAt: now})
	state := encodeState(st)
	return &runs.BackgroundStart{SessionID: t.ChildSessionID, OwnerID: t.OwnerID, AgentConfigID: step.Agent, RunID: t.RunID,
		Input: input, Task: t.Link(), CompactFirst: step.CompactBefore, Continues: continues,
		Also: func(tx ports.SessionTx) error { return tx.RecordTaskState(ctx, t.ID, t.RunID, state, now) }}
}

// failLaunch ends a task whose attempt cannot launch, failed with why
// (for a workflow with its state, when given, saying where it stopped),
// and tells whoever follows it.
func (m *Manager) failLaunch(ctx context.Context, t domain.Task, st *domain.WorkflowState, why string) {
	f := ports.TaskFinal{TaskID: t.ID, RunID: t.RunID, Status: domain.TaskFailed, At: m.d.Clock.Now(), Result: why}
	if st != nil {
		f.Result, f.State = stopped(*st, why), encodeState(*st)
	}
	f.Summary = summarize(f.Result)
	if _, err := m.d.Store.FinalizeTask(ctx, f); err != nil {
		m.logErr("failing a task failed", err, "task_id", t.ID)
		return
	}
	if now, err := m.d.Store.FindTask(ctx, t.ID); err == nil {
		m.settled(ctx, now)
	}
}

// pauseStep holds an execution before a pause_before step: one
// transaction files the step approval (in the conversation that asked,
// where its task's approvals are listed) and makes the task
// input_required.
func (m *Manager) pauseStep(ctx context.Context, t domain.Task, st domain.WorkflowState, step domain.WorkflowStep) {
	args, _ := json.Marshal(map[string]string{"workflow": st.Name, "step": step.Name, "step_id": step.ID, "agent": step.Agent,
		"prompt": step.Prompt, "progress": workflows.Progress(st), "task_id": t.ID})
	a := domain.Approval{ID: m.d.IDs.NewID(), SessionID: t.ChildSessionID, RunID: t.RunID, OwnerID: t.OwnerID,
		ToolCallID: "step_" + t.RunID, ToolName: domain.StepApprovalTool, Arguments: string(args), CreatedAt: m.d.Clock.Now()}
	won, err := m.d.Store.PauseStep(ctx, t.ID, a, a.CreatedAt)
	if err != nil || !won {
		m.logErr("holding a workflow before its step failed", err, "task_id", t.ID)
		return
	}
	_, err = m.reload(ctx, t.ID)
	m.logErr("reading a task failed", err, "task_id", t.ID)
}

// DecideStep implements approvals.Steps: a person's decision on a
// pause_before approval. Approving launches the step now (the returned run
// is its reserved id, running once started); rejecting cancels the
// execution. Only one decision wins; the others find nothing (not_found).
// An approval past the owner's max_runs_per_user is refused (rate_limited)
// and stays pending.
func (m *Manager) DecideStep(ctx context.Context, a domain.Approval, approve bool, reason string) (domain.Run, error) {
	t, err := m.d.Store.FindTaskByRun(ctx, a.RunID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			err = errs.E(errs.NotFound, "approval not found")
		}
		return domain.Run{}, err
	}
	st, err := readState(t)
	if err != nil {
		return domain.Run{}, err
	}
	var end *ports.TaskFinal
	status := domain.RunRunning
	if approve {
		// Approving starts the step: refused past the owner's live runs,
		// the approval stays pending for another try.
		if err := m.runs.CheckRunCap(ctx, t.OwnerID); err != nil {
			return domain.Run{}, err
		}
		st.Cleared = t.RunID
	} else {
		why := "a person rejected the step"
		if strings.TrimSpace(reason) != "" {
			why += ": " + strings.TrimSpace(reason)
		}
		end = &ports.TaskFinal{TaskID: t.ID, RunID: t.RunID, Status: domain.TaskCancelled, Result: stopped(st, why), At: m.d.Clock.Now()}
		end.Summary, end.State = summarize(end.Result), encodeState(st)
		status = domain.RunCancelled
	}
	won, err := m.d.Store.ResolveStep(ctx, a, end, encodeState(st), m.d.Clock.Now())
	if err != nil {
		return domain.Run{}, err
	}
	if !won {
		return domain.Run{}, errs.E(errs.NotFound, "approval not found")
	}
	if t, err = m.d.Store.FindTask(ctx, t.ID); err != nil {
		return domain.Run{}, err
	}
	m.settled(ctx, t)
	m.pump(ctx, t.ParentSessionID)
	return domain.Run{ID: a.RunID, SessionID: t.ChildSessionID, OwnerID: t.OwnerID, Status: status}, nil
}

// stepped remembers the execution a step run advanced, by that run's id:
// once advanced, the task names its next run, and the ended run's hook
// still has to find it.
func (m *Manager) noteStepped(runID, taskID string) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.stepped[runID] = taskID
}

func (m *Manager) takeStepped(runID string) (string, bool) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	id, ok := m.stepped[runID]
	delete(m.stepped, runID)
	return id, ok
}

// stepEnding is Ending for an execution's step run: the definition's
// answer (workflows.Next) written in the run's end transaction — the next
// step reserved (an Advance compare-and-set on the run that ended), or the
// execution's terminal status with the launch log's last ending.
func (m *Manager) stepEnding(ctx context.Context, t domain.Task, run domain.Run) func(tx ports.SessionTx) error {
	st, err := readState(t)
	if err != nil {
		f := final(t, run, ports.TaskFinal{At: m.d.Clock.Now()})
		return func(tx ports.SessionTx) error { _, err := tx.FinalizeTask(ctx, f); return err }
	}
	now := m.d.Clock.Now()
	d := workflows.Next(st, workflows.Outcome{Errored: run.Status != domain.RunCompleted, Output: run.FinalOutput})
	if run.Status == domain.RunCancelled {
		d = workflows.Decision{Ending: domain.StepFailed, Action: workflows.Failed}
	}
	for i := range st.StepRuns {
		if st.StepRuns[i].RunID == run.ID {
			st.StepRuns[i].Ending, st.StepRuns[i].EndedAt = d.Ending, &now
		}
	}
	f := ports.TaskFinal{TaskID: t.ID, RunID: run.ID, At: now}
	switch d.Action {
	case workflows.Finish:
		f.Status, f.Result = domain.TaskCompleted, run.FinalOutput
	case workflows.Launch:
		if d.Edge != "" {
			if st.Laps == nil {
				st.Laps = map[string]int{}
			}
			st.Laps[d.Edge]++
		}
		from, _ := stepAt(st)
		if d.Ending == domain.StepFailed {
			st.Lead = fmt.Sprintf("The step %q failed (%s): %s\nYou are running because of that failure: handle it, then finish "+
				"your own step.", from.Name, run.ErrorCode, run.ErrorMessage)
		}
		st.StepID = d.Next
		next, _ := stepAt(st)
		adv := ports.TaskAdvance{TaskID: t.ID, RunID: run.ID, NewRunID: m.d.IDs.NewID(), AgentConfigID: next.Agent, State: encodeState(st), At: now}
		m.noteStepped(run.ID, t.ID)
		return func(tx ports.SessionTx) error {
			_, err := tx.AdvanceTask(ctx, adv)
			return err
		}
	default:
		if run.Status == domain.RunCancelled {
			f = final(t, run, f)
			if f.Status == domain.TaskFailed {
				f.Result = stopped(st, "the server shut down while the step was running")
			}
		} else {
			why := d.Reason
			if d.Ending == domain.StepFailed && run.Status != domain.RunCompleted {
				why = fmt.Sprintf("%s (%s): %s", why, run.ErrorCode, run.ErrorMessage)
			}
			if d.Edge != "" {
				st.Bound = d.Reason
			}
			f.Status, f.Result = domain.TaskFailed, stopped(st, why)
		}
	}
	f.Summary, f.State = summarize(f.Result), encodeState(st)
	return func(tx ports.SessionTx) error {
		_, err := tx.FinalizeTask(ctx, f)
		return err
	}
}

// checkWorkflowRetry refuses a retry of an execution that a bound ended,
// or that is over its budget: it could only end the same way. Returns
// conflict.
func (m *Manager) checkWorkflowRetry(ctx context.Context, t domain.Task) error {
	st, err := readState(t)
	if err != nil {
		return err
	}
	if st.Bound != "" {
		return errs.E(errs.Conflict, "the workflow ended on a bound (%s); a retry could only end the same way", st.Bound)
	}
	if why := workflows.BeforeLaunch(st, m.spent(ctx, t, st)); why != "" {
		return errs.E(errs.Conflict, "a retry would be over the workflow's bounds: %s", why)
	}
	return nil
}

// orphanEnding is how the restart sweep ends a task: a workflow fails at
// its step, whose launch records it failed.
func orphanEnding(at time.Time) func(domain.Task) (string, []byte) {
	return func(t domain.Task) (string, []byte) {
		if t.Kind != domain.TaskWorkflow {
			return restartMessage, nil
		}
		st, err := readState(t)
		if err != nil {
			return restartMessage, nil
		}
		for i := range st.StepRuns {
			if st.StepRuns[i].EndedAt == nil {
				st.StepRuns[i].Ending, st.StepRuns[i].EndedAt = domain.StepFailed, &at
			}
		}
		return stopped(st, "the server restarted while it was working"), encodeState(st)
	}
}

// describe is where a task stands, for task_status: a workflow's step.
func describe(t domain.Task) string {
	if t.Kind != domain.TaskWorkflow {
		return ""
	}
	st, err := readState(t)
	if err != nil {
		return ""
	}
	return "progress: " + workflows.Progress(st)
}

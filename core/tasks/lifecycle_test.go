package tasks_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// Stop, Retry and Dismiss act on the caller's tasks only, each refusing
// (conflict) a task in the wrong state for it.
func TestThePersonsVerbsGuardTheirTasks(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("slow", porttest.Reply{Block: true})
		h.answer("broken", porttest.Fail(ports.ModelInvalid, "no"))
		live := h.spawn(parent, "slow")
		failed := h.spawn(parent, "broken")
		ctx := t.Context()

		_, err := h.mgr.Stop(ctx, h.other, live.ID)
		wantCode(t, err, errs.NotFound)
		_, err = h.mgr.Retry(ctx, h.other, failed.ID)
		wantCode(t, err, errs.NotFound)
		_, err = h.mgr.Dismiss(ctx, h.other, failed.ID)
		wantCode(t, err, errs.NotFound)
		_, err = h.mgr.Get(ctx, h.other, live.ID)
		wantCode(t, err, errs.NotFound)

		_, err = h.mgr.Dismiss(ctx, h.user, live.ID)
		wantCode(t, err, errs.Conflict)
		_, err = h.mgr.Retry(ctx, h.user, live.ID)
		wantCode(t, err, errs.Conflict)
		_, err = h.mgr.Stop(ctx, h.user, failed.ID)
		wantCode(t, err, errs.Conflict)

		got, err := h.mgr.Dismiss(ctx, h.user, failed.ID)
		if err != nil || !got.Dismissed {
			t.Fatalf("dismiss = %+v, %v", got, err)
		}
		if got, err = h.mgr.Stop(ctx, h.user, live.ID); err != nil || got.Status != domain.TaskCancelled {
			t.Fatalf("stop = %s, %v", got.Status, err)
		}
		synctest.Wait()
		if run, _ := h.runStore.FindRun(ctx, live.RunID); run.Status != domain.RunCancelled {
			t.Fatalf("a stopped task's run = %s", run.Status)
		}
	})
}

// A retry is refused, costing no attempt, while the conversation is at
// its live-task cap (conflict) or the owner at max_runs_per_user
// (rate_limited); a task out of attempts is refused too.
func TestARetryIsRefusedPastTheCaps(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.set(settings.KeyMaxTasksPerSession, "1")
		parent := h.session()
		h.answer("broken", porttest.Fail(ports.ModelInvalid, "no"))
		h.answer("slow", porttest.Reply{Block: true})
		failed := h.spawn(parent, "broken")
		h.spawn(parent, "slow")
		_, err := h.mgr.Retry(t.Context(), h.user, failed.ID)
		wantCode(t, err, errs.Conflict)
		if !strings.Contains(errs.MessageOf(err), "already has 1 live tasks") {
			t.Fatalf("refusal = %v", err)
		}
		h.set(settings.KeyMaxTasksPerSession, "5")
		h.set(settings.KeyMaxRunsPerUser, "1")
		_, err = h.mgr.Retry(t.Context(), h.user, failed.ID)
		wantCode(t, err, errs.RateLimited)
		if got := h.task(failed.ID); got.Attempt != 1 || got.Status != domain.TaskFailed {
			t.Fatalf("a refused retry cost an attempt: %+v", got)
		}
		h.set(settings.KeyMaxRunsPerUser, "10")
		for range domain.MaxTaskAttempts - 1 {
			if _, err := h.mgr.Retry(t.Context(), h.user, failed.ID); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		_, err = h.mgr.Retry(t.Context(), h.user, failed.ID)
		wantCode(t, err, errs.Conflict)
		if !strings.Contains(errs.MessageOf(err), "used all 3 attempts") {
			t.Fatalf("refusal = %v", err)
		}
	})
}

// An attempt that cannot start — its owner at max_runs_per_user — ends
// failed saying why, and reports back like any failure.
func TestAnAttemptThatCannotStartFails(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.set(settings.KeyMaxRunsPerUser, "1")
		h.answer("chat", porttest.Reply{Block: true})
		busy := h.session()
		if _, err := h.runs.Start(t.Context(), h.user, busy.ID, runsInput("chat")); err != nil {
			t.Fatal(err)
		}
		parent := h.session()
		task := h.spawn(parent, "never runs")
		if task.Status != domain.TaskFailed || !strings.HasPrefix(task.Result, "The task could not start: this account already has 1 runs going") {
			t.Fatalf("task = %s %q", task.Status, task.Result)
		}
		if due := h.due(parent.ID); len(due) != 1 || due[0].TaskID != task.ID {
			t.Fatalf("due = %+v", due)
		}
		if cards := h.cards(parent.ID); len(cards) != 1 || cards[0].Display.Extra["task_status"] != "failed" {
			t.Fatalf("cards = %+v", cards)
		}
	})
}

// Stopping a queued task ends it at once and records that on its card
// (its run never started, so no run's end will); the queue moves on.
func TestStoppingAQueuedTaskWritesItsCard(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.set(settings.KeyMaxTasksPerSession, "1")
		parent := h.session()
		h.answer("slow", porttest.Reply{Block: true})
		h.spawn(parent, "slow")
		a := h.callAs(parent, h.agent, "call-queued", tools.SpawnTask.Name, `{"prompt":"queued job"}`)
		queued := h.task(a.Display.Extra["task_id"])
		if !queued.Queued() {
			t.Fatalf("not queued: %+v", queued)
		}
		got, err := h.mgr.Stop(t.Context(), h.user, queued.ID)
		if err != nil || got.Status != domain.TaskCancelled {
			t.Fatalf("stop = %+v, %v", got, err)
		}
		cards := h.cards(parent.ID)
		if len(cards) != 1 || cards[0].TargetCallID != "call-queued" || cards[0].Display.Extra["task_status"] != "cancelled" {
			t.Fatalf("cards = %+v", cards)
		}
		if _, err := h.runStore.FindRun(t.Context(), queued.RunID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a stopped queued task's run started: %v", err)
		}
	})
}

// A task whose run waits for a person's decision is input_required
// until the decision lets it go on.
func TestATaskWaitsForADecision(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		gated := h.newAgent(h.user, domain.AgentSpec{Name: "gated", Approval: domain.AgentApproval{ApproveTools: []string{"todo_write"}}})
		h.answer("plan it", porttest.Reply{Calls: []porttest.Call{{ID: "todo-1", Name: "todo_write", Arguments: `{"todos":[]}`}}},
			porttest.Reply{Text: "planned"})
		parent := h.session()
		a := h.callAs(parent, gated, "c", tools.SpawnTask.Name, `{"prompt":"plan it"}`)
		synctest.Wait()
		task := h.task(a.Display.Extra["task_id"])
		if task.Status != domain.TaskInputRequired || task.PendingCallID != "todo-1" {
			t.Fatalf("task = %s waiting on %q", task.Status, task.PendingCallID)
		}
		status := h.call(parent, tools.TaskStatus.Name, fmt.Sprintf(`{"task_id":%q}`, task.ID))
		if !strings.Contains(status.Output, "waiting for a person's approval; do not redo its work") {
			t.Fatalf("status = %q", status.Output)
		}
		approvals, err := h.runs.Approvals(t.Context(), h.user, task.ChildSessionID)
		if err != nil || len(approvals) != 1 {
			t.Fatalf("approvals = %+v, %v", approvals, err)
		}
		if _, err := h.runs.Decide(t.Context(), h.user, approvals[0].ID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := h.task(task.ID); got.Status != domain.TaskCompleted || got.Result != "planned" || got.PendingCallID != "" {
			t.Fatalf("after the decision = %s %q waiting on %q", got.Status, got.Result, got.PendingCallID)
		}
	})
}

// Deleting a conversation stops its live tasks first, their runs with
// them.
func TestDeletingAConversationStopsItsTasks(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("slow", porttest.Reply{Block: true})
		task := h.spawn(parent, "slow")
		if err := h.sessions.Delete(t.Context(), h.user, parent.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if run, err := h.runStore.FindRun(t.Context(), task.RunID); err == nil && run.Status == domain.RunRunning {
			t.Fatalf("the task's run still runs: %+v", run)
		}
		if h.llm.Open() != 0 {
			t.Fatalf("%d model calls still open", h.llm.Open())
		}
		if _, err := h.mgr.Get(t.Context(), h.user, task.ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("the deleted conversation's task: %v", err)
		}
	})
}

// At start, Recover fails the tasks a crash left working (with a debt
// each) and Drain pays every owed conversation; Prune later drops the
// settled debts and the sessions of spawns cut short.
func TestARestartFailsOrphansAndReportsThem(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		parent := h.session()
		child, err := h.sessions.CreateChild(ctx, parent, "orphan", h.agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := h.clock.Now()
		inherit := fmt.Sprintf(`{"asking_agent_id":%q}`, h.agent.ID)
		crashed := domain.Task{ID: "t-crashed", RunID: "r-crashed", OwnerID: h.user.User.ID, ParentSessionID: parent.ID, ChildSessionID: child.ID,
			AgentConfigID: h.agent.ID, Label: "crashed", Kind: domain.TaskAgent, Attempt: 1, Status: domain.TaskWorking, Inherit: []byte(inherit),
			LaunchedAt: &now, CreatedAt: now, UpdatedAt: now}
		if err := h.taskStore.CreateTask(ctx, crashed, nil); err != nil {
			t.Fatal(err)
		}
		if err := h.mgr.Recover(ctx, []string{"another-run"}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got := h.task(crashed.ID); got.Status != domain.TaskWorking {
			t.Fatalf("a failover's sweep took another replica's task: %s", got.Status)
		}
		if err := h.mgr.Recover(ctx, nil, time.Time{}); err != nil {
			t.Fatal(err)
		}
		got := h.task(crashed.ID)
		if got.Status != domain.TaskFailed || got.Result != "The server restarted while this task was working; it did not finish." {
			t.Fatalf("after the sweep = %s %q", got.Status, got.Result)
		}
		if len(h.due(parent.ID)) != 1 || len(h.wakeups(parent.ID)) != 0 {
			t.Fatal("the debt was not owed until Drain")
		}
		h.mgr.Drain(ctx)
		synctest.Wait()
		if wake := h.wakeups(parent.ID); len(wake) != 1 || len(h.due(parent.ID)) != 0 {
			t.Fatalf("after Drain: %d wake-ups, due %+v", len(wake), h.due(parent.ID))
		}

		// A spawn cut short left a hidden session no task names.
		if _, err := h.sessions.CreateChild(ctx, parent, "cut short", h.agent.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := h.mgr.Prune(ctx); err != nil || n != 0 {
			t.Fatalf("an early prune = %d, %v", n, err)
		}
		h.clock.Advance(8 * 24 * time.Hour)
		if n, err := h.mgr.Prune(ctx); err != nil || n != 2 {
			t.Fatalf("prune = %d, %v; want the settled debt and the unnamed session", n, err)
		}
		if _, err := h.sessions.Find(ctx, child.ID); err != nil {
			t.Fatalf("a task's own session was pruned: %v", err)
		}
	})
}

// A debt nobody can read — the agent that asked and the conversation's
// own are both gone — is dropped with a visible note, not kept forever.
func TestResultsNobodyCanReadAreDroppedVisibly(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		asker := h.newAgent(h.user, domain.AgentSpec{Name: "asker"})
		parent := h.session()
		h.answer("quick", porttest.Reply{Text: "done"})
		h.answer("chat", porttest.Reply{Block: true})
		chat, err := h.runs.Start(t.Context(), h.user, parent.ID, runsInput("chat"))
		if err != nil {
			t.Fatal(err)
		}
		a := h.callAs(parent, asker, "c", tools.SpawnTask.Name, `{"prompt":"quick"}`)
		synctest.Wait()
		if len(h.due(parent.ID)) != 1 {
			t.Fatal("the result was not owed while the conversation was busy")
		}
		for _, id := range []string{asker.ID, h.agent.ID} {
			if err := h.config.InConfigTx(t.Context(), func(tx ports.ConfigTx) error { return tx.DeleteAgent(t.Context(), id) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.runs.StopRun(t.Context(), chat.ID, "stopped"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(h.due(parent.ID)) != 0 || len(h.wakeups(parent.ID)) != 0 {
			t.Fatalf("due %+v, %d wake-ups", h.due(parent.ID), len(h.wakeups(parent.ID)))
		}
		var noted bool
		for _, e := range h.entries(parent.ID) {
			noted = noted || strings.HasPrefix(e.Text, "Background task results could not be delivered")
		}
		if !noted {
			t.Fatalf("no note of the dropped result of %s", a.Display.Extra["task_id"])
		}
	})
}

// Results due while the conversation waits for a decision stay owed: a
// wake-up would supersede the pause.
func TestAPausedConversationIsNotWoken(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		gated := h.newAgent(h.user, domain.AgentSpec{Name: "gated", Approval: domain.AgentApproval{ApproveTools: []string{"todo_write"}}})
		parent, err := h.sessions.Create(t.Context(), h.user, "gated chat", gated.ID)
		if err != nil {
			t.Fatal(err)
		}
		h.answer("chat", porttest.Reply{Calls: []porttest.Call{{Name: "todo_write", Arguments: `{"todos":[]}`}}})
		if _, err := h.runs.Start(t.Context(), h.user, parent.ID, runsInput("chat")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.answer("quick", porttest.Reply{Text: "done"})
		h.spawn(parent, "quick")
		if len(h.due(parent.ID)) != 1 || len(h.wakeups(parent.ID)) != 0 {
			t.Fatalf("a paused conversation: due %+v, %d wake-ups", h.due(parent.ID), len(h.wakeups(parent.ID)))
		}
	})
}

// Two results due together come in one wake-up.
func TestOneWakeUpCarriesEveryDueResult(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("chat", porttest.Reply{Block: true})
		chat, err := h.runs.Start(t.Context(), h.user, parent.ID, runsInput("chat"))
		if err != nil {
			t.Fatal(err)
		}
		h.answer("one", porttest.Reply{Text: "1"})
		h.answer("two", porttest.Reply{Text: "2"})
		first, second := h.spawn(parent, "one"), h.spawn(parent, "two")
		if err := h.runs.StopRun(t.Context(), chat.ID, "stopped"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		wake := h.wakeups(parent.ID)
		if len(wake) != 1 || wake[0].Display.Summary != "2 tasks reported" ||
			wake[0].Display.Extra["task_ids"] != first.ID+","+second.ID && wake[0].Display.Extra["task_ids"] != second.ID+","+first.ID {
			t.Fatalf("wake-ups = %+v", wake)
		}
	})
}

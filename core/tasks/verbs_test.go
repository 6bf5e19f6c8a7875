package tasks_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports/porttest"
)

// task_status with no task lists the conversation's tasks, newest first,
// each saying whether to wait for it; with one it reports it.
func TestTaskStatusListsTheConversationsTasks(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		if a := h.call(parent, tools.TaskStatus.Name, `{}`); a.IsError || a.Output != "This conversation has no background tasks." {
			t.Fatalf("an empty list = %+v", a)
		}
		h.answer("quick", porttest.Reply{Text: "quick result"})
		h.answer("slow", porttest.Reply{Block: true})
		done := h.spawn(parent, "quick")
		live := h.spawn(parent, "slow")
		a := h.call(parent, tools.TaskStatus.Name, ``)
		if !a.IsError || !strings.Contains(a.Output, "task_status takes {\"task_id\": …}") {
			t.Fatalf("no arguments = %+v", a)
		}
		a = h.call(parent, tools.TaskStatus.Name, `{}`)
		lines := strings.Split(strings.TrimSpace(a.Output), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[1], "- "+live.ID) || !strings.HasPrefix(lines[2], "- "+done.ID) {
			t.Fatalf("the list = %q", a.Output)
		}
		if !strings.HasSuffix(lines[1], "working (attempt 1 of 3) — still working — do not redo its work") ||
			!strings.HasSuffix(lines[2], "completed (attempt 1 of 3) — quick result") {
			t.Fatalf("the list's lines = %q", lines[1:])
		}
	})
}

// task_status on a live task waits TaskStatusWait for it to change — in a
// bubble, no time at all — and says it still works; on a task that ends
// meanwhile it hands over the result, which settles the task's debt so no
// notification repeats it.
func TestTaskStatusWaitsForALiveTask(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("slow", porttest.Reply{Block: true})
		live := h.spawn(parent, "slow")
		a := h.call(parent, tools.TaskStatus.Name, fmt.Sprintf(`{"task_id":%q}`, live.ID))
		if a.IsError || !strings.Contains(a.Output, "It is still working after a 2m0s wait") || a.Display.Extra["task_status"] != "working" {
			t.Fatalf("status of a live task = %+v", a)
		}

		release := make(chan struct{})
		h.answer("held", porttest.Reply{Text: strings.Repeat("r", 20<<10), Hold: release})
		held := h.spawn(parent, "held")
		// Busy with a chat run, the parent is not woken when the task
		// ends; the status call is what reads the result.
		h.answer("chat", porttest.Reply{Block: true})
		chat, err := h.runs.Start(t.Context(), h.user, parent.ID, runsInput("chat"))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string)
		go func() {
			got <- h.call(parent, tools.TaskStatus.Name, fmt.Sprintf(`{"task_id":%q}`, held.ID)).Output
		}()
		synctest.Wait() // the status call waits on the task
		close(release)
		out := <-got
		if !strings.Contains(out, "completed (attempt 1 of 3)") || !strings.Contains(out, "Result:\n"+strings.Repeat("r", 100)) ||
			!strings.HasSuffix(out, fmt.Sprintf("[… %d more characters …]", 4<<10)) {
			t.Fatalf("status of a task that ended = %.200q … %q", out, out[max(len(out)-60, 0):])
		}
		synctest.Wait()
		for _, w := range h.due(parent.ID) {
			if w.TaskID == held.ID {
				t.Fatalf("a result handed over is still owed: %+v", w)
			}
		}
		if err := h.runs.StopRun(t.Context(), chat.ID, "stopped"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, w := range h.wakeups(parent.ID) {
			if strings.Contains(w.Display.Extra["task_ids"], held.ID) {
				t.Fatalf("a wake-up repeated a result task_status handed over: %+v", w.Display)
			}
		}
	})
}

// The verbs act only on the calling conversation's tasks: another
// conversation's (or user's) task reads as absent.
func TestTaskVerbsStayInTheirConversation(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("slow", porttest.Reply{Block: true})
		mine := h.spawn(h.session(), "slow")
		elsewhere := h.session()
		for _, verb := range []string{tools.TaskStatus.Name, tools.TaskStop.Name, tools.TaskRetry.Name} {
			a := h.call(elsewhere, verb, fmt.Sprintf(`{"task_id":%q}`, mine.ID))
			if !a.IsError || !strings.Contains(a.Output, "no task "+mine.ID+" in this conversation") {
				t.Errorf("%s from another conversation = %+v", verb, a)
			}
		}
		for _, verb := range []string{tools.TaskStop.Name, tools.TaskRetry.Name} {
			if a := h.call(elsewhere, verb, `{}`); !a.IsError || !strings.Contains(a.Output, verb+" needs a task_id") {
				t.Errorf("%s without an id = %+v", verb, a)
			}
		}
		theirs := h.sessionOf(h.other)
		run := domainRun(theirs)
		if a := h.mgr.Call(t.Context(), verbCall(run, tools.TaskStop.Name, mine.ID)); !a.IsError || !strings.Contains(a.Output, "task not found") {
			t.Fatalf("another user's stop = %+v", a)
		}
		if got := h.task(mine.ID); got.Status != domain.TaskWorking {
			t.Fatalf("the task was touched: %s", got.Status)
		}
	})
}

// task_stop cancels a live task, which then reports nothing; a stopped
// task cannot be stopped again, and only a failed one can be retried.
func TestTaskStopEndsATaskWithoutAReport(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("slow", porttest.Reply{Block: true})
		task := h.spawn(parent, "slow")
		a := h.call(parent, tools.TaskStop.Name, fmt.Sprintf(`{"task_id":%q}`, task.ID))
		if a.IsError || !strings.Contains(a.Output, "Stopped task "+task.ID) {
			t.Fatalf("stop = %+v", a)
		}
		synctest.Wait()
		got := h.task(task.ID)
		if got.Status != domain.TaskCancelled || got.Result != "Stopped before it finished." {
			t.Fatalf("a stopped task = %s %q", got.Status, got.Result)
		}
		if run, _ := h.runStore.FindRun(t.Context(), task.RunID); run.Status != domain.RunCancelled {
			t.Fatalf("its run = %s", run.Status)
		}
		if len(h.due(parent.ID)) != 0 || len(h.wakeups(parent.ID)) != 0 {
			t.Fatal("a stopped task reported back")
		}
		if cards := h.cards(parent.ID); len(cards) != 1 || cards[0].Display.Extra["task_status"] != "cancelled" {
			t.Fatalf("cards = %+v", cards)
		}
		for verb, want := range map[string]string{tools.TaskStop.Name: "the task is already cancelled",
			tools.TaskRetry.Name: "only a failed task can be retried; this one is cancelled"} {
			if a := h.call(parent, verb, fmt.Sprintf(`{"task_id":%q}`, task.ID)); !a.IsError || !strings.Contains(a.Output, want) {
				t.Errorf("%s of a stopped task = %+v", verb, a)
			}
		}
	})
}

// task_retry runs a failed task again — told why, with its prompt — up to
// MaxTaskAttempts, each failed attempt reporting back.
func TestTaskRetryRunsAFailedTaskAgain(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		h.answer("flaky", porttest.Fail("invalid_request", "no"), porttest.Fail("invalid_request", "no"), porttest.Reply{Text: "third time lucky"})
		task := h.spawn(parent, "flaky")
		firstRun := task.RunID
		a := h.call(parent, tools.TaskRetry.Name, fmt.Sprintf(`{"task_id":%q}`, task.ID))
		if a.IsError || !strings.Contains(a.Output, "attempt 2 of 3") {
			t.Fatalf("retry = %+v", a)
		}
		synctest.Wait()
		got := h.task(task.ID)
		if got.Status != domain.TaskFailed || got.Attempt != 2 || got.RunID == firstRun {
			t.Fatalf("after the second attempt = %s attempt %d run %s", got.Status, got.Attempt, got.RunID)
		}
		in := h.inputs(task.ChildSessionID)
		if len(in) != 2 || !strings.Contains(in[1], "This is attempt 2 of 3") || !strings.HasSuffix(in[1], "flaky") {
			t.Fatalf("the retry was told %q", in)
		}
		if _, err := h.mgr.Retry(t.Context(), h.user, task.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got = h.task(task.ID); got.Status != domain.TaskCompleted || got.Attempt != 3 || got.Result != "third time lucky" {
			t.Fatalf("after the third attempt = %s attempt %d %q", got.Status, got.Attempt, got.Result)
		}
		// Every attempt that ended reported, in its own debt.
		var attempts []int
		for _, w := range h.taskStore.Wakeups() {
			attempts = append(attempts, w.Attempt)
		}
		if fmt.Sprint(attempts) != "[1 2 3]" {
			t.Fatalf("debts by attempt = %v", attempts)
		}
	})
}

package tasks_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports/porttest"
)

// A spawned task runs its prompt on a hidden session of its own, ends
// with its run's answer, records that on its spawn card, and pays its
// parent one [task-notification] turn carrying the result.
func TestASpawnedTaskReportsBackOnce(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("summarise the logs", porttest.Reply{Text: "the logs are quiet"})
		parent := h.session()
		a := h.callAs(parent, h.agent, "call-spawn", tools.SpawnTask.Name, `{"prompt":"summarise the logs"}`)
		if a.IsError || !strings.Contains(a.Output, "Started background task") || !strings.Contains(a.Output, "It is working now") {
			t.Fatalf("spawn answer = %+v", a)
		}
		synctest.Wait()
		task := h.task(a.Display.Extra["task_id"])
		if task.Status != domain.TaskCompleted || task.Result != "the logs are quiet" || task.Summary != "the logs are quiet" ||
			task.Label != "summarise the logs" || task.Attempt != 1 || task.ToolCallID != "call-spawn" || task.AgentConfigID != h.agent.ID {
			t.Fatalf("task = %+v", task)
		}
		child, err := h.sessions.Find(t.Context(), task.ChildSessionID)
		if err != nil || !child.IsTaskSession() || child.ParentSessionID != parent.ID {
			t.Fatalf("the task's session = %+v, %v", child, err)
		}
		if in := h.inputs(task.ChildSessionID); len(in) != 1 || in[0] != "summarise the logs" {
			t.Fatalf("the task's run was told %q", in)
		}
		cards := h.cards(parent.ID)
		if len(cards) != 1 || cards[0].TargetCallID != "call-spawn" || cards[0].Display.Extra["task_status"] != "completed" {
			t.Fatalf("spawn cards = %+v", cards)
		}
		wake := h.wakeups(parent.ID)
		if len(wake) != 1 || wake[0].Display.Extra["task_ids"] != task.ID || wake[0].Display.Summary != `"summarise the logs" completed` {
			t.Fatalf("wake-ups = %+v", wake)
		}
		in := domain.ParseItem(wake[0].Item).Text()
		if !strings.HasPrefix(in, tasks.NotificationPrefix) || !strings.Contains(in, `result="the logs are quiet"`) {
			t.Fatalf("the wake-up's input = %q", in)
		}
		if due := h.due(parent.ID); len(due) != 0 {
			t.Fatalf("debts left after the wake-up: %+v", due)
		}
		// The wake-up runs as the agent that asked.
		if s, _ := h.sessions.Find(t.Context(), parent.ID); s.AgentConfigID != h.agent.ID {
			t.Fatalf("the wake-up ran as %s", s.AgentConfigID)
		}
	})
}

// spawn_task refuses what it cannot run, saying why in words the model
// can act on, and writes nothing.
func TestSpawnRefusesWhatItCannotRun(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		for _, c := range []struct{ args, want string }{
			{`{"prompt":`, "spawn_task takes"},
			{`{"prompt":"x","colour":"red"}`, "spawn_task takes"},
			{`{"prompt":"   "}`, "spawn_task needs a prompt"},
			{`{"prompt":"x","agent":"nobody"}`, `there is no agent "nobody" to run the task: name one of "helper" (yourself)`},
			{`{"prompt":"x","workflow":"nothing"}`, `there is no workflow named "nothing": no workflow is defined`},
		} {
			a := h.call(parent, tools.SpawnTask.Name, c.args)
			if !a.IsError || !strings.HasPrefix(a.Output, "Error: ") || !strings.Contains(a.Output, c.want) {
				t.Errorf("%s → %+v, want an error with %q", c.args, a, c.want)
			}
		}
		if list, _ := h.taskStore.ListSessionTasks(t.Context(), parent.ID); len(list) != 0 {
			t.Fatalf("a refused spawn wrote %d tasks", len(list))
		}
		// A task's own run cannot start tasks (one level deep).
		h.answer("nest", porttest.Reply{Text: "done"})
		task := h.spawn(parent, "nest")
		child, _ := h.sessions.Find(t.Context(), task.ChildSessionID)
		if a := h.call(child, tools.SpawnTask.Name, `{"prompt":"deeper"}`); !strings.Contains(a.Output, "a background task cannot start tasks of its own") {
			t.Fatalf("a nested spawn = %+v", a)
		}
		if a := h.call(parent, "not_a_verb", `{}`); !a.IsError || !strings.Contains(a.Output, "not_a_verb is not a task verb") {
			t.Fatalf("an unknown verb = %+v", a)
		}
	})
}

// The task runs as the agent named — one the caller may hand off to — or
// as the caller itself under any of its self names; a label is one line,
// bounded.
func TestSpawnRunsTheAgentItNames(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		coder := h.newAgent(h.user, domain.AgentSpec{Name: "Coder"})
		theirs := h.newAgent(h.other, domain.AgentSpec{Name: "Theirs"})
		caller := h.newAgent(h.user, domain.AgentSpec{Name: "lead", Handoffs: []string{coder.ID, theirs.ID, "gone"}})
		h.answer("job", porttest.Reply{Text: "ok"})
		parent := h.session()
		for _, c := range []struct{ agent, want string }{
			{"coder", coder.ID}, {"", caller.ID}, {"self", caller.ID}, {"LEAD", caller.ID}, {"current", caller.ID},
		} {
			a := h.callAs(parent, caller, "c", tools.SpawnTask.Name, `{"prompt":"job","agent":"`+c.agent+`"}`)
			if a.IsError {
				t.Fatalf("agent %q: %s", c.agent, a.Output)
			}
			synctest.Wait()
			if got := h.task(a.Display.Extra["task_id"]); got.AgentConfigID != c.want {
				t.Errorf("agent %q ran %s, want %s", c.agent, got.AgentConfigID, c.want)
			}
		}
		// Another user's private agent is not offered, even as a handoff.
		a := h.callAs(parent, caller, "c", tools.SpawnTask.Name, `{"prompt":"job","agent":"theirs"}`)
		if !a.IsError || !strings.Contains(a.Output, `name one of Coder, "lead" (yourself)`) {
			t.Fatalf("another's agent = %+v", a)
		}
		long := strings.Repeat("word ", 30)
		a = h.call(parent, tools.SpawnTask.Name, `{"prompt":"job","label":"  two\n lines `+long+`"}`)
		synctest.Wait()
		label := h.task(a.Display.Extra["task_id"]).Label
		if r := []rune(label); len(r) != 60 || !strings.HasPrefix(label, "two lines word") || !strings.HasSuffix(label, "…") {
			t.Fatalf("label = %q (%d runes)", label, len(r))
		}
	})
}

// Past max_tasks_per_session a task waits its turn and starts when a live
// one ends; past max_queued_tasks_per_session too, a spawn is refused as
// conflict.
func TestTasksPastTheCapWaitTheirTurn(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.set(settings.KeyMaxTasksPerSession, "1")
		h.set(settings.KeyMaxQueuedTasksPerSession, "1")
		release := make(chan struct{})
		h.answer("first job", porttest.Reply{Text: "first done", Hold: release})
		h.answer("second job", porttest.Reply{Text: "second done"})
		parent := h.session()
		first := h.spawn(parent, "first job")
		if first.Status != domain.TaskWorking || first.Queued() {
			t.Fatalf("first = %s queued %v", first.Status, first.Queued())
		}
		a := h.call(parent, tools.SpawnTask.Name, `{"prompt":"second job"}`)
		if a.IsError || !strings.Contains(a.Output, "It waits for a free slot") {
			t.Fatalf("second spawn = %+v", a)
		}
		second := h.task(a.Display.Extra["task_id"])
		if !second.Queued() {
			t.Fatalf("second is not queued: %+v", second)
		}
		full := h.call(parent, tools.SpawnTask.Name, `{"prompt":"third job"}`)
		if !full.IsError || !strings.Contains(full.Output, "at their limit: 1 working and 1 waiting") {
			t.Fatalf("third spawn = %+v", full)
		}
		close(release)
		synctest.Wait()
		if got := h.task(second.ID); got.Status != domain.TaskCompleted || got.Result != "second done" {
			t.Fatalf("the queued task after the first ended = %s %q", got.Status, got.Result)
		}
		if got := h.task(first.ID); got.Status != domain.TaskCompleted {
			t.Fatalf("first = %s", got.Status)
		}
		// Both results reached the parent; none is owed any more.
		if n := len(h.wakeups(parent.ID)); n < 1 || len(h.due(parent.ID)) != 0 {
			t.Fatalf("%d wake-ups, due %+v", n, h.due(parent.ID))
		}
	})
}

// A run that fails fails its task with the run's error; a shutdown is no
// one's stop, so the task fails saying so and its parent is told later.
func TestATaskEndsAsItsRunDid(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		h.answer("doomed", porttest.Fail("invalid_request", "bad request"))
		parent := h.session()
		task := h.spawn(parent, "doomed")
		if task.Status != domain.TaskFailed || !strings.HasPrefix(task.Result, "The run failed (") {
			t.Fatalf("task = %s %q", task.Status, task.Result)
		}
		in := domain.ParseItem(h.wakeups(parent.ID)[0].Item).Text()
		if !strings.Contains(in, "status=failed") || !strings.Contains(in, "task_retry(task_id)") {
			t.Fatalf("the wake-up = %q", in)
		}

		h.answer("long job", porttest.Reply{Block: true})
		long := h.spawn(parent, "long job")
		// The drain's grace ends at once: the bubble's clock jumps to it.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		h.runs.Shutdown(ctx)
		synctest.Wait()
		got := h.task(long.ID)
		if got.Status != domain.TaskFailed || !strings.Contains(got.Result, "The server shut down while this task was working") {
			t.Fatalf("a task cut by a shutdown = %s %q", got.Status, got.Result)
		}
		if due := h.due(parent.ID); len(due) != 1 || due[0].TaskID != long.ID {
			t.Fatalf("a shutdown's debt = %+v, want it owed until the next start", due)
		}
	})
}

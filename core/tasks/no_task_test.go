package tasks_test

import (
	"testing"
	"testing/synctest"

	"github.com/agents-server/agents-server/ports/porttest"
)

// A run that is no task's attempt (a chat run, a wake-up) works in a
// session that is no task's: its task is not looked for as it ends — not
// by Ending, nor again by Ended — and its end still pays the session's
// debts: the result owed while the chat ran is delivered by a wake-up run.
func TestARunThatIsNoTasksIsNotLookedFor(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		parent := h.session()
		hold := make(chan struct{})
		h.answer("chat", porttest.Reply{Hold: hold, Text: "chatted"})
		h.answer("quick", porttest.Reply{Text: "done"})
		h.answer("task-notification", porttest.Reply{Text: "noted"})
		if _, err := h.runs.Start(t.Context(), h.user, parent.ID, runsInput("chat")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		h.spawn(parent, "quick")
		synctest.Wait()
		if len(h.due(parent.ID)) != 1 {
			t.Fatalf("owed while the chat ran: %+v", h.due(parent.ID))
		}
		before := h.taskStore.RunLookups()
		close(hold)
		synctest.Wait()
		if len(h.due(parent.ID)) != 0 || len(h.wakeups(parent.ID)) != 1 {
			t.Fatalf("after the chat ended: due %+v, %d wake-ups", h.due(parent.ID), len(h.wakeups(parent.ID)))
		}
		// The chat run's end and the wake-up run's end: no lookup.
		if n := h.taskStore.RunLookups() - before; n != 0 {
			t.Fatalf("%d task lookups by run for two runs that are no task's, want 0", n)
		}
	})
}

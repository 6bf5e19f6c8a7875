package tasks_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports/porttest"
)

// Deleting a conversation whose task waits for a decision ends the task's
// paused run too: its stream says run.cancelled (session_deleted), as a
// paused run of the conversation's own would.
func TestDeletingAConversationEndsItsTasksPausedRun(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		gated := h.newAgent(h.user, domain.AgentSpec{Name: "gated", Approval: domain.AgentApproval{ApproveTools: []string{"todo_write"}}})
		h.answer("plan it", porttest.Reply{Calls: []porttest.Call{{ID: "todo-1", Name: "todo_write", Arguments: `{"todos":[]}`}}})
		parent := h.session()
		a := h.callAs(parent, gated, "c", tools.SpawnTask.Name, `{"prompt":"plan it"}`)
		synctest.Wait()
		task := h.task(a.Display.Extra["task_id"])
		if task.Status != domain.TaskInputRequired {
			t.Fatalf("task = %s", task.Status)
		}
		if err := h.sessions.Delete(t.Context(), h.user, parent.ID); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		sub, err := h.hub.Subscribe(task.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		// The bubble's clock: a stream left open fails the test, not hangs.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var last domain.Event
		for {
			ev, err := sub.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			last = ev
		}
		if last.Type != domain.EventCancelled || !strings.Contains(string(last.Payload), "session_deleted") {
			t.Fatalf("the task's paused run ended with %s %s", last.Type, last.Payload)
		}
	})
}

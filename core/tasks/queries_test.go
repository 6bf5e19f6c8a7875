package tasks_test

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// The listings show a person their own tasks, newest first, each with its
// conversation's name; a page past MaxPage, a negative offset or an
// unknown kind is refused naming the field.
func TestTaskListingsAreTheCallers(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		h.answer("job", porttest.Reply{Text: "ok"})
		parent := h.session()
		older, newer := h.spawn(parent, "job"), h.spawn(parent, "job")
		h.spawn(h.sessionOf(h.other), "job")

		list, total, err := h.mgr.List(ctx, h.user, ports.TaskFilter{})
		if err != nil || total != 2 || len(list) != 2 || list[0].ID != newer.ID || list[1].ID != older.ID || list[0].SessionName != "chat" {
			t.Fatalf("list = %+v (%d), %v", list, total, err)
		}
		if page, total, _ := h.mgr.List(ctx, h.user, ports.TaskFilter{Limit: 1, Offset: 1}); total != 2 || len(page) != 1 || page[0].ID != older.ID {
			t.Fatalf("page 2 = %+v (%d)", page, total)
		}
		if page, total, _ := h.mgr.List(ctx, h.user, ports.TaskFilter{Kind: domain.TaskWorkflow}); total != 0 || len(page) != 0 {
			t.Fatalf("workflows = %+v", page)
		}
		for _, c := range []struct {
			f     ports.TaskFilter
			field string
		}{
			{ports.TaskFilter{Limit: tasks.MaxPage + 1}, "limit"},
			{ports.TaskFilter{Limit: -1}, "limit"},
			{ports.TaskFilter{Offset: -1}, "offset"},
			{ports.TaskFilter{Kind: "chore"}, "kind"},
		} {
			_, _, err := h.mgr.List(ctx, h.user, c.f)
			if errs.CodeOf(err) != errs.Validation || errs.FieldsOf(err)[c.field] == "" {
				t.Errorf("%+v → %v, want validation on %s", c.f, err, c.field)
			}
		}

		got, err := h.mgr.SessionTasks(ctx, h.user, parent.ID)
		if err != nil || len(got) != 2 || got[0].ID != newer.ID {
			t.Fatalf("session tasks = %+v, %v", got, err)
		}
		_, err = h.mgr.SessionTasks(ctx, h.other, parent.ID)
		wantCode(t, err, errs.NotFound)

		if found, err := h.mgr.Get(ctx, h.user, older.ID); err != nil || found.Result != "ok" {
			t.Fatalf("get = %+v, %v", found, err)
		}
		if found, ok, err := h.mgr.ByRun(ctx, newer.RunID); err != nil || !ok || found.ID != newer.ID {
			t.Fatalf("by run = %+v %v %v", found, ok, err)
		}
		if _, ok, err := h.mgr.ByRun(ctx, "not-a-task-run"); err != nil || ok {
			t.Fatalf("a run that is no task's = %v %v", ok, err)
		}
	})
}

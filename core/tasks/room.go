package tasks

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
)

// room returns the check a new task's insert runs on its conversation's
// counts (see checkRoom), with the caps as they are set now.
func (m *Manager) room(ctx context.Context) (func(live, queued int) error, error) {
	maxLive, err := m.d.Settings.Int(ctx, settings.KeyMaxTasksPerSession)
	if err != nil {
		return nil, err
	}
	maxQueued, err := m.d.Settings.Int(ctx, settings.KeyMaxQueuedTasksPerSession)
	if err != nil {
		return nil, err
	}
	return func(live, queued int) error { return checkRoom(live, queued, maxLive, maxQueued) }, nil
}

// checkRoom admits a new task while its conversation holds fewer than
// maxLive working plus maxQueued waiting: past max_tasks_per_session a
// task waits, and at most max_queued_tasks_per_session may, so a run that
// spawns every turn cannot pile up work. The sum, not the queue alone,
// is compared: spawns racing each other are queued for an instant before
// the first of them launches. Returns conflict, saying why in words a
// model can act on.
func checkRoom(live, queued, maxLive, maxQueued int) error {
	if live+queued < maxLive+maxQueued {
		return nil
	}
	return errs.E(errs.Conflict, "this conversation's background tasks are at their limit: %d working and %d waiting for a slot "+
		"(max_tasks_per_session %d, max_queued_tasks_per_session %d); start another when one ends (task_status shows them)",
		live, queued, maxLive, maxQueued)
}

// checkRoomFirst runs admit on the conversation's tasks as listed now,
// before anything of a new task is written (its hidden session): the
// insert checks again, exactly, in its own transaction.
func (m *Manager) checkRoomFirst(ctx context.Context, sessionID string, admit func(live, queued int) error) error {
	list, err := m.d.Store.ListSessionTasks(ctx, sessionID)
	if err != nil {
		return err
	}
	live, queued := 0, 0
	for _, t := range list {
		switch {
		case t.LaunchedAt != nil && t.Live():
			live++
		case t.LaunchedAt == nil && t.Status == domain.TaskWorking:
			queued++
		}
	}
	return admit(live, queued)
}

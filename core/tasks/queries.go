package tasks

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// MaxPage bounds a task listing's page.
const MaxPage = 500

// Listed is a task in the caller's list, with its conversation's name.
type Listed struct {
	domain.Task
	SessionName string
}

// Get returns a task of the caller's; anyone else's is not_found
// (visibility follows the parent session: its owner only).
func (m *Manager) Get(ctx context.Context, p domain.Principal, id string) (domain.Task, error) {
	return m.owned(ctx, p.User.ID, id)
}

// List returns a page of the caller's tasks, newest first, each with its
// conversation's name, and how many match in all. Returns validation for
// a limit past MaxPage or a negative offset.
func (m *Manager) List(ctx context.Context, p domain.Principal, f ports.TaskFilter) ([]Listed, int, error) {
	if f.Limit < 0 || f.Limit > MaxPage {
		return nil, 0, errs.Field("limit", "must be between 1 and %d", MaxPage)
	}
	if f.Offset < 0 {
		return nil, 0, errs.Field("offset", "must not be negative")
	}
	if f.Kind != "" && !domain.Known(f.Kind) {
		return nil, 0, errs.Field("kind", "must be %s", domain.OrList(f.Kind.Values()))
	}
	list, total, err := m.d.Store.ListTasks(ctx, p.User.ID, f)
	if err != nil {
		return nil, 0, err
	}
	names := map[string]string{}
	out := make([]Listed, len(list))
	for i, t := range list {
		name, ok := names[t.ParentSessionID]
		if !ok {
			if s, err := m.d.Sessions.Find(ctx, t.ParentSessionID); err == nil {
				name = s.Name
			}
			names[t.ParentSessionID] = name
		}
		out[i] = Listed{Task: t, SessionName: name}
	}
	return out, total, nil
}

// SessionTasks returns the tasks a session of the caller's spawned,
// newest first. Returns not_found for a session that is not the caller's.
func (m *Manager) SessionTasks(ctx context.Context, p domain.Principal, sessionID string) ([]domain.Task, error) {
	if _, err := m.d.Sessions.Get(ctx, p, sessionID); err != nil {
		return nil, err
	}
	return m.d.Store.ListSessionTasks(ctx, sessionID)
}

// ByRun returns the task a run is the current attempt of; ok is false for
// a run that is no task's.
func (m *Manager) ByRun(ctx context.Context, runID string) (domain.Task, bool, error) {
	t, err := m.d.Store.FindTaskByRun(ctx, runID)
	if errs.Is(err, errs.NotFound) {
		return t, false, nil
	}
	return t, err == nil, err
}

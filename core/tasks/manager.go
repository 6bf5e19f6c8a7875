// Package tasks runs background work: a task is a sub-agent on a prompt,
// started from a chat by spawn_task, working on its own hidden session and
// reporting back by a debt the parent session is paid once — one
// [task-notification] turn carrying every due result. It drives the run
// engine (core/runs, its Engine) and is told of every run's pause and end
// as a runs.Listener.
package tasks

import (
	"context"
	"log/slog"
	"sync"

	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/ports"
)

// Deps are what the manager works with.
type Deps struct {
	Store     ports.TaskStore
	Approvals ports.ApprovalStore
	Sessions  *sessions.Journal
	Config    ports.ConfigReader
	Settings  *settings.Service
	Workflows *workflows.Service
	// Projects binds a conversation a workflow start names a project for;
	// nil refuses project_id.
	Projects ProjectBinder
	Hub      *hub.Hub
	IDs      ports.IDs
	Clock    ports.Clock
	Log      *slog.Logger
}

// Manager owns the tasks' lifecycle: spawn, the live-task cap and its
// queue, stop, retry, dismiss, the restart sweep and the wake-ups.
type Manager struct {
	d    Deps
	runs Engine // see AttachEngine

	launchMu sync.Mutex // one launch decision at a time, so the cap holds
	drainMu  sync.Mutex // one wake-up decision at a time, so a debt is paid once

	watchMu sync.Mutex
	watch   map[string]chan struct{} // task id → closed at its next change
	stepped map[string]string        // a step run that advanced its workflow → the task
	noTask  noTaskRuns               // runs Ending found no task for, until their Ended
}

// The manager decides the engine's workflow steps and is the sessions' Work.
var (
	_ approvals.Steps = (*Manager)(nil)
	_ sessions.Work   = (*Manager)(nil)
)

// Engine is the run engine as the manager drives it (*runs.Service).
type Engine interface {
	// Work stops and holds a session's own run (see StopWork).
	sessions.Work
	// StartBackground starts a run nobody typed: a task's attempt, a
	// workflow's step, a wake-up.
	StartBackground(ctx context.Context, req runs.BackgroundStart) (domain.Run, error)
	// StopRun ends a task's run, live, paused or running elsewhere.
	StopRun(ctx context.Context, runID, why string) error
	// CheckRunCap refuses (rate_limited) work that would pass the
	// owner's max_runs_per_user.
	CheckRunCap(ctx context.Context, ownerID string) error
}

// New returns a manager; AttachEngine gives it the run engine it drives.
func New(d Deps) *Manager {
	return &Manager{d: d, watch: map[string]chan struct{}{}, stepped: map[string]string{}}
}

// AttachEngine gives the manager the run engine it drives, before
// anything is served. It is the one link the composition root makes after
// construction, for a real cycle: the manager starts runs (spawns,
// workflow steps, wake-ups) and the engine, built after it, tells it of
// every run's pause and end (runs.Deps.Listeners) and asks it to decide a
// workflow step (runs.Deps.Tasks) — and a run's end is what starts the
// next step or wake-up. One of the two has to be given the other once
// both exist.
func (m *Manager) AttachEngine(e Engine) { m.runs = e }

// changed tells whoever follows a task that it moved: the task.updated
// event (on its run's stream while that is live, else to each of the
// owner's connections) and the task_status calls waiting on it.
func (m *Manager) changed(t domain.Task) {
	ev := domain.NewEvent(domain.EventTaskUpdated, t.Info())
	if m.d.Hub.Publish(t.RunID, ev) == 0 {
		m.d.Hub.Notify(t.OwnerID, ev)
	}
	m.watchMu.Lock()
	if ch, ok := m.watch[t.ID]; ok {
		close(ch)
		delete(m.watch, t.ID)
	}
	m.watchMu.Unlock()
}

// changes returns a channel closed at the task's next change.
func (m *Manager) changes(taskID string) <-chan struct{} {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	ch, ok := m.watch[taskID]
	if !ok {
		ch = make(chan struct{})
		m.watch[taskID] = ch
	}
	return ch
}

// reload reads a task again and announces it.
func (m *Manager) reload(ctx context.Context, id string) (domain.Task, error) {
	t, err := m.d.Store.FindTask(ctx, id)
	if err != nil {
		return t, err
	}
	m.changed(t)
	return t, nil
}

// owned returns a task of the owner's; anyone else's reads as absent.
func (m *Manager) owned(ctx context.Context, ownerID, id string) (domain.Task, error) {
	t, err := m.d.Store.FindTask(ctx, id)
	if err == nil && t.OwnerID != ownerID {
		err = errs.E(errs.NotFound, "task not found")
	}
	return t, err
}

// ownedWithin is owned, for a task spawned by the session within ("" for
// any): a run acts only on its own conversation's tasks.
func (m *Manager) ownedWithin(ctx context.Context, ownerID, id, within string) (domain.Task, error) {
	t, err := m.owned(ctx, ownerID, id)
	if err == nil && within != "" && t.ParentSessionID != within {
		err = errs.E(errs.NotFound, "no task %s in this conversation: task_status() lists them", id)
	}
	return t, err
}

// logErr logs what a hook cannot return.
func (m *Manager) logErr(msg string, err error, args ...any) {
	if err != nil {
		m.d.Log.Error(msg, append(args, "err", err)...)
	}
}

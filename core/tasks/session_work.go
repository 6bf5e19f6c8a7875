package tasks

import (
	"context"

	"github.com/agents-server/agents-server/core/sessions"
)

// StopWork implements sessions.Work for a session about to be deleted:
// its own run stops first (the engine's StopWork), then its live tasks —
// their rows, so nothing launches them again, then their runs — so no
// task keeps working once its conversation is gone. Every session stays
// held until Release. Returns unavailable when ctx ends while a run is
// still stopping.
func (m *Manager) StopWork(ctx context.Context, sessionID string) (_ sessions.Stopped, err error) {
	var stopped []sessions.Stopped
	defer func() {
		if err != nil {
			release(stopped)
		}
	}()
	own, err := m.runs.StopWork(ctx, sessionID)
	if err != nil {
		return sessions.Stopped{}, err
	}
	stopped = append(stopped, own)
	children, err := m.stopTasks(ctx, sessionID)
	if err != nil {
		return sessions.Stopped{}, err
	}
	for _, child := range children {
		s, err := m.runs.StopWork(ctx, child)
		if err != nil {
			return sessions.Stopped{}, err
		}
		stopped = append(stopped, s)
	}
	return sessions.Stopped{
		Release: func() { release(stopped) },
		Deleted: func() {
			for _, s := range stopped {
				s.Deleted()
			}
		},
	}, nil
}

// Hold implements sessions.Work: the engine's hold on the session.
func (m *Manager) Hold(sessionID string) (func(), error) { return m.runs.Hold(sessionID) }

// release lets the held sessions go, the last held first.
func release(stopped []sessions.Stopped) {
	for i := len(stopped) - 1; i >= 0; i-- {
		stopped[i].Release()
	}
}

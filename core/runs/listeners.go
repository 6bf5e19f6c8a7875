package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Listener hears of a run's life, on every path a run takes: the task
// manager (a task's status follows its run) and the watchers (metrics,
// trace export, through traces.EndsTo) are listeners. They are given to New
// in one list and told in its order.
type Listener interface {
	// Ending returns what a run's end also writes in its own transaction
	// (a task attempt's terminal status), or nil; taskSession false says
	// the run's session is no task's, so no task names the run.
	Ending(ctx context.Context, run domain.Run, taskSession bool) func(tx ports.SessionTx) error
	// Paused is told when a run waits for a decision on pendingCallID;
	// Resumed when the decision let it go on.
	Paused(run domain.Run, pendingCallID string)
	Resumed(run domain.Run)
	// Ended is told once a run has ended here (completed, failed,
	// cancelled, or ended while paused) and let go of its session.
	Ended(run domain.Run)
	// Recovered is told of a run a restart's sweep ended (server_restarted):
	// its process is gone, so nothing of it is live here.
	Recovered(run domain.Run)
}

// listeners is the engine's list, told in order.
type listeners []Listener

// Ending joins what each listener writes with a run's end (nil: nothing).
func (ls listeners) Ending(ctx context.Context, run domain.Run, taskSession bool) func(tx ports.SessionTx) error {
	var writes []func(tx ports.SessionTx) error
	for _, l := range ls {
		if w := l.Ending(ctx, run, taskSession); w != nil {
			writes = append(writes, w)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	return func(tx ports.SessionTx) error {
		for _, w := range writes {
			if err := w(tx); err != nil {
				return err
			}
		}
		return nil
	}
}

func (ls listeners) paused(run domain.Run, pendingCallID string) {
	for _, l := range ls {
		l.Paused(run, pendingCallID)
	}
}

// Resumed tells each listener a paused run goes on.
func (ls listeners) Resumed(run domain.Run) {
	for _, l := range ls {
		l.Resumed(run)
	}
}

// Ended tells each listener a run ended.
func (ls listeners) Ended(run domain.Run) {
	for _, l := range ls {
		l.Ended(run)
	}
}

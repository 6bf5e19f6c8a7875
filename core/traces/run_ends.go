package traces

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// EndsTo is a run engine's listener (runs.Listener) that tells o how every
// run ended, here or in a restart's sweep (o's RunEnded), as the recorder
// tells it of every span stored; pauses and resumes are not its concern.
func EndsTo(o ports.RunObserver) RunEnds { return RunEnds{o} }

// RunEnds tells an observer of runs' ends (EndsTo).
type RunEnds struct{ o ports.RunObserver }

// Ending implements runs.Listener: nothing rides on a run's end.
func (RunEnds) Ending(context.Context, domain.Run, bool) func(tx ports.SessionTx) error { return nil }

// Paused implements runs.Listener.
func (RunEnds) Paused(domain.Run, string) {}

// Resumed implements runs.Listener.
func (RunEnds) Resumed(domain.Run) {}

// Ended implements runs.Listener.
func (e RunEnds) Ended(run domain.Run) { e.o.RunEnded(run) }

// Recovered implements runs.Listener.
func (e RunEnds) Recovered(run domain.Run) { e.o.RunEnded(run) }

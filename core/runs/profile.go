package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-server/agents-server/ports"
)

// heldProfile is a run's context profile (what its build put in front of
// the conversation) waiting for the run's next session write: the first
// recorded turn, or the run's end, files it in its transaction rather than
// in a commit of its own.
type heldProfile struct {
	profile json.RawMessage // nil once filed
	at      time.Time       // when the build made it
}

// with is also preceded by the profile's write, if one is held.
func (h heldProfile) with(ctx context.Context, runID string, also func(tx ports.SessionTx) error) func(tx ports.SessionTx) error {
	if h.profile == nil {
		return also
	}
	return func(tx ports.SessionTx) error {
		if err := tx.SaveContextProfile(ctx, runID, h.profile, h.at); err != nil {
			return err
		}
		if also == nil {
			return nil
		}
		return also(tx)
	}
}

package domain

import (
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// RunStatus is where a run stands.
type RunStatus string

// The run statuses.
const (
	RunRunning     RunStatus = "running"
	RunInterrupted RunStatus = "interrupted" // paused for a person's decision; not final
	RunCompleted   RunStatus = "completed"
	RunError       RunStatus = "error"
	RunCancelled   RunStatus = "cancelled"
)

// Final reports whether the status ends the run.
func (s RunStatus) Final() bool { return s == RunCompleted || s == RunError || s == RunCancelled }

// Run is one execution of an agent on a session, written at start and at
// every status change so restarts and listings know what happened.
type Run struct {
	ID            string
	SessionID     string
	OwnerID       string
	AgentConfigID string
	ProjectID     string
	Input         string
	Status        RunStatus
	LastSeq       int64
	ErrorCode     string
	ErrorMessage  string
	FinalOutput   string
	// PartialOutput is what the model call in flight had streamed at the
	// run's last checkpoint ("" once its answer is whole or the run ended).
	PartialOutput string
	// SeqMark is how far the run's event numbering may have gone: marked
	// ahead of publication, so an ending numbered past it repeats no id a
	// watcher was sent, whatever a crash lost.
	SeqMark int64
	// CallsInFlight are the tool calls the run started and had not yet
	// recorded (opaque JSON the runner writes, "" for none): what a crash
	// recovery records, with an unknown outcome.
	CallsInFlight string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	EndedAt       *time.Time
	// Replica is the server process running the run, or that last ran it
	// (its id on the replica roll): commands for a live run go to it.
	Replica string
}

// EndingSeq is the seq of the event a run a crash left running ends with:
// past its last checkpoint and its seq mark, so past every event a watcher
// may hold. The store's orphan sweep writes the same.
func (r Run) EndingSeq() int64 { return max(r.LastSeq, r.SeqMark) + 1 }

// CheckOwner refuses anyone but the run's owner, as if it did not exist.
// Returns not_found.
func (r Run) CheckOwner(p Principal) error {
	if r.OwnerID != p.User.ID {
		return errs.E(errs.NotFound, "run not found")
	}
	return nil
}

// Inject queues say when injected input reaches the run.
const (
	QueueSteer    QueueMode = "steer"     // at the next save point inside this exchange
	QueueNextTurn QueueMode = "next_turn" // at the next turn boundary
	QueueFollowUp QueueMode = "follow_up" // a new exchange once this one finishes
)

// Cancel modes.
const (
	CancelAbort    CancelMode = "abort"    // stop now
	CancelGraceful CancelMode = "graceful" // finish the current turn, then stop
)

// HeldBy is the fence of a run's writes (ports.SessionWriter.HoldRun):
// nil when run is running on replica, conflict otherwise — another
// replica's failover ended it, or took it over, while replica was cut off.
func HeldBy(run Run, replica string) error {
	if run.Status != RunRunning || run.Replica != replica {
		return errs.E(errs.Conflict, "the run %s is no longer this replica's: it is %s on replica %q", run.ID, run.Status, run.Replica)
	}
	return nil
}

package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Replicas. A run executes on the replica that started (or resumed) it;
// every replica serves its events (the hub mirrors them) and takes the
// commands for it, sending each to the replica running it.

// Peers reach the other replicas.
type Peers interface {
	// Command has the replica carry cmd out (see Service.Execute) and
	// waits for its answer: its refusal, as an error with a code, or
	// unavailable when it does not answer in time.
	Command(ctx context.Context, replica string, cmd Command) error
}

// The commands a replica sends another for a run it runs.
const (
	OpCancel = "cancel"
	OpInject = "inject"
	OpStop   = "stop"
)

// Command is a request for a run another replica runs.
type Command struct {
	Op    string `json:"op"`
	RunID string `json:"run_id"`
	// UserID is the caller's: only the run's owner may cancel or inject
	// (empty for stop, which the task manager sends whoever owns it).
	UserID string            `json:"user_id,omitempty"`
	Mode   domain.CancelMode `json:"mode,omitempty"`
	Queue  domain.QueueMode  `json:"queue,omitempty"`
	Input  string            `json:"input,omitempty"`
	Why    string            `json:"why,omitempty"`
}

// elsewhere reports whether run executes on another replica this one can
// reach.
func (s *Service) elsewhere(run domain.Run) bool {
	return s.d.Peers != nil && run.Replica != "" && run.Replica != s.d.Replica
}

// forward sends cmd to the replica running runID when that is not this
// one: the caller's run, still running, elsewhere. Otherwise it returns
// local, the refusal this replica found.
func (s *Service) forward(ctx context.Context, p domain.Principal, runID string, local error, cmd Command) error {
	if s.d.Peers == nil {
		return local
	}
	run, err := s.d.Runs.FindRun(ctx, runID)
	if err != nil || run.OwnerID != p.User.ID || run.Status != domain.RunRunning || !s.elsewhere(run) {
		return local
	}
	cmd.RunID, cmd.UserID = runID, p.User.ID
	return s.d.Peers.Command(ctx, run.Replica, cmd)
}

// Execute carries out a command another replica sent for a run executing
// here, as that replica's caller. It never forwards: a run that is not
// here (it ended, or moved on) is refused as the caller's own replica
// would refuse it.
func (s *Service) Execute(ctx context.Context, cmd Command) error {
	if cmd.Op == OpStop {
		s.stopLive(cmd.RunID, cmd.Why)
		return nil
	}
	lr, err := s.liveRun(domain.Principal{User: domain.User{ID: cmd.UserID}}, cmd.RunID)
	if err != nil {
		return err
	}
	switch cmd.Op {
	case OpCancel:
		if cmd.Mode != "" && !domain.Known(cmd.Mode) {
			return errs.Field("mode", "must be %s", domain.OrList(cmd.Mode.Values()))
		}
		cancelLive(lr, cmd.Mode)
		return nil
	case OpInject:
		return injectLive(lr, cmd.Queue, cmd.Input)
	}
	return errs.E(errs.Validation, "unknown command %q", cmd.Op)
}

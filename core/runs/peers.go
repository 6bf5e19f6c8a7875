package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/remote"
)

// Execute carries out a command another replica sent for a run executing
// here, as that replica's caller (core/remote). It never forwards: a run
// that is not here (it ended, or moved on) is refused as the caller's own
// replica would refuse it.
func (s *Service) Execute(ctx context.Context, cmd remote.Command) error {
	if cmd.Op == remote.OpStop {
		s.stopLive(cmd.RunID, cmd.Why)
		return nil
	}
	lr, err := s.liveRun(domain.Principal{User: domain.User{ID: cmd.UserID}}, cmd.RunID)
	if err != nil {
		return err
	}
	switch cmd.Op {
	case remote.OpCancel:
		if cmd.Mode != "" && !domain.Known(cmd.Mode) {
			return errs.Field("mode", "must be %s", domain.OrList(cmd.Mode.Values()))
		}
		cancelLive(lr, cmd.Mode)
		return nil
	case remote.OpInject:
		return injectLive(lr, cmd.Queue, cmd.Input)
	}
	return errs.E(errs.Validation, "unknown command %q", cmd.Op)
}

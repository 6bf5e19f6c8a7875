package sessions

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// Work is what runs on sessions, as deleting a session or moving its
// branch must stop or hold it. The run engine implements it; sessions does
// not know runs.
type Work interface {
	// Hold takes the session's slot, so no run starts on it until release;
	// conflict while a run holds it.
	Hold(sessionID string) (release func(), err error)
	// StopWork stops the work on a session about to be deleted — its run,
	// its tasks and their runs — and holds their slots until Release.
	// Returns unavailable when ctx ends while a run is still stopping.
	StopWork(ctx context.Context, sessionID string) (Stopped, error)
}

// Stopped is a session's work, stopped and held while the session is
// deleted.
type Stopped struct {
	// Release lets the held slots go.
	Release func()
	// Deleted tells the work its sessions are gone (a paused run's stream
	// then ends).
	Deleted func()
}

// Service manages sessions and their entries: the Journal's reading and
// writing, and the two changes that must first stop or hold the live work
// on a session (Delete, Branch). It is built after the run engine, which
// is its Work.
type Service struct {
	*Journal
	work Work
}

// New returns the Service over j, stopping and holding work through work
// (nil: nothing runs on sessions).
func New(j *Journal, work Work) *Service {
	if work == nil {
		work = noWork{}
	}
	return &Service{Journal: j, work: work}
}

// noWork is the Work of a service given none: nothing runs.
type noWork struct{}

func (noWork) Hold(string) (func(), error) { return func() {}, nil }

func (noWork) StopWork(context.Context, string) (Stopped, error) {
	return Stopped{Release: func() {}, Deleted: func() {}}, nil
}

// Delete stops a session's work and then deletes the session with
// everything it holds: a live run is cancelled and waited for until its
// loop has ended, a paused one is ended (its stream says run.cancelled),
// and the session's slot is held across the delete so nothing new starts
// on it. Once it returns no model call or tool of the session runs any
// more. Its owner or an admin may. Returns not_found, or unavailable when
// ctx ends while a run is still stopping.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	if err := s.CheckDelete(ctx, p, id); err != nil {
		return err
	}
	stopped, err := s.work.StopWork(ctx, id)
	if err != nil {
		return err
	}
	defer stopped.Release()
	if err := s.CheckDelete(ctx, p, id); err != nil {
		return err
	}
	if err := s.store.DeleteSession(ctx, id); err != nil {
		return err
	}
	stopped.Deleted()
	return nil
}

// Branch moves the session's active branch to an entry (see moveBranch),
// holding the session so no run starts while it moves. Returns not_found,
// conflict while a run is active on the session, or validation for an
// entry that is not the session's content.
func (s *Service) Branch(ctx context.Context, p domain.Principal, id, entryID string) (domain.Session, error) {
	if _, err := s.Get(ctx, p, id); err != nil {
		return domain.Session{}, err
	}
	release, err := s.work.Hold(id)
	if err != nil {
		return domain.Session{}, err
	}
	defer release()
	return s.moveBranch(ctx, p, id, entryID)
}

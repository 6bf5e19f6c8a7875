// Package remote reaches the runs other replicas execute. A run executes
// on the replica that started (or resumed) it; every replica serves its
// events (the hub mirrors them) and takes the commands for it, sending
// each to the replica running it (Peers: the replicas' link). A stop sent
// there is waited for until the run's row says it ended, and its end is
// heard here before the caller goes on. The run engine holds one Remote.
package remote

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
)

// Peers reach the other replicas.
type Peers interface {
	// Command has the replica carry cmd out (the run engine's Execute)
	// and waits for its answer: its refusal, as an error with a code, or
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

// Runs reads run rows (ports.RunStore).
type Runs interface {
	FindRun(ctx context.Context, id string) (domain.Run, error)
	ListSessionRuns(ctx context.Context, sessionID string) ([]domain.Run, error)
	ListRunningRuns(ctx context.Context, ownerID string) ([]domain.Run, error)
}

// Remote is one replica's reach to the runs the others execute. With no
// peers (one process serves alone) there is nothing elsewhere: every
// method is then a no-op or answers with what this replica found.
type Remote struct {
	peers Peers
	runs  Runs
	hub   *hub.Hub
	self  string
}

// New returns replica self's reach to the others over peers (nil: none).
func New(peers Peers, runs Runs, h *hub.Hub, self string) *Remote {
	return &Remote{peers: peers, runs: runs, hub: h, self: self}
}

// Elsewhere reports whether run executes on another replica this one can
// reach.
func (r *Remote) Elsewhere(run domain.Run) bool {
	return r.peers != nil && run.Replica != "" && run.Replica != r.self
}

// Stop sends replica a stop for runID, for why.
func (r *Remote) Stop(ctx context.Context, replica, runID, why string) error {
	return r.peers.Command(ctx, replica, Command{Op: OpStop, RunID: runID, Why: why})
}

// Forward sends cmd to the replica running runID when that is not this
// one: p's run, still running, elsewhere. Otherwise it returns local, the
// refusal this replica found.
func (r *Remote) Forward(ctx context.Context, p domain.Principal, runID string, local error, cmd Command) error {
	if r.peers == nil {
		return local
	}
	run, err := r.runs.FindRun(ctx, runID)
	if err != nil || run.OwnerID != p.User.ID || run.Status != domain.RunRunning || !r.Elsewhere(run) {
		return local
	}
	cmd.RunID, cmd.UserID = runID, p.User.ID
	return r.peers.Command(ctx, run.Replica, cmd)
}

// StopSession stops the session's run executing on another replica, if
// any, and waits until its row says it ended, or ctx ends (unavailable).
// A replica that does not answer is left to the failover.
func (r *Remote) StopSession(ctx context.Context, sessionID, why string) error {
	if r.peers == nil {
		return nil
	}
	list, err := r.runs.ListSessionRuns(ctx, sessionID)
	if err != nil {
		return err
	}
	for _, run := range list {
		if run.Status != domain.RunRunning || !r.Elsewhere(run) {
			continue
		}
		err := r.Stop(ctx, run.Replica, run.ID, why)
		if errs.Is(err, errs.Unavailable) {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := r.awaitEnd(ctx, run.ID, "the session's run is still stopping; retry shortly"); err != nil {
			return err
		}
	}
	return nil
}

// StopUser tells the replicas running userID's runs to stop them for why
// and returns, once they took the command, a wait for each run's end: it
// returns when each row says the run ended and this replica's watchers
// heard it, or ctx ends (unavailable, saying still). A replica that does
// not answer is left to the failover.
func (r *Remote) StopUser(ctx context.Context, userID, why string) (wait func(ctx context.Context, still string) error, err error) {
	wait = func(context.Context, string) error { return nil }
	if r.peers == nil {
		return wait, nil
	}
	list, err := r.runs.ListRunningRuns(ctx, userID)
	if err != nil {
		return nil, err
	}
	var stopping []domain.Run
	for _, run := range list {
		if !r.Elsewhere(run) {
			continue
		}
		err := r.Stop(ctx, run.Replica, run.ID, why)
		if errs.Is(err, errs.Unavailable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		stopping = append(stopping, run)
	}
	return func(ctx context.Context, still string) error {
		for _, run := range stopping {
			ended, err := r.awaitEnd(ctx, run.ID, still)
			if err != nil {
				return err
			}
			r.hearEnd(ctx, ended)
		}
		return nil
	}, nil
}

// awaitEnd polls a run another replica is stopping until its row says it
// ended (or it is gone), and returns the row as it ended; when ctx ends
// first it returns unavailable saying still.
func (r *Remote) awaitEnd(ctx context.Context, runID, still string) (domain.Run, error) {
	for {
		now, err := r.runs.FindRun(ctx, runID)
		if err != nil || now.Status != domain.RunRunning {
			return now, nil
		}
		select {
		case <-ctx.Done():
			return now, errs.Wrap(errs.Unavailable, ctx.Err(), "%s", still)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// relayWait bounds how long hearEnd waits for another replica's final
// event to reach this one: the backplane takes milliseconds.
const relayWait = time.Second

// hearEnd has this replica's watchers of a run another replica ended see
// it end before the caller goes on (an account's streams close here, say,
// while the final event comes over the backplane): it waits, a moment at
// most, for the relayed final event — which comes after the run's other
// events, so nothing is missed — and otherwise files the stored ending.
func (r *Remote) hearEnd(ctx context.Context, ended domain.Run) {
	info, ok := r.hub.Info(ended.ID)
	if !ok || !info.Live {
		return // not streamed here, or its end already heard
	}
	if sub, err := r.hub.Subscribe(ended.ID, info.LastSeq); err == nil {
		wait, cancel := context.WithTimeout(ctx, relayWait)
		for {
			if ev, err := sub.Next(wait); err != nil || ev.Final() {
				break
			}
		}
		cancel()
		sub.Close()
	}
	FileEnding(r.hub, ended)
}

// FileEnding files a run's stored ending (its row, ended elsewhere) on
// h's stream of it: numbered past what was heard here, after a run.gap
// for whatever the relay did not bring; nothing for a stream that ended.
func FileEnding(h *hub.Hub, ended domain.Run) {
	info, _ := h.Info(ended.ID)
	if evs, ok := hub.StoredEnding(ended, info.LastSeq); ok {
		h.Fill(ended.ID, evs)
	}
}

// Package recovery is the restart's sweep: it ends the runs a crash left
// running — at start, before the server serves anything, and on failover
// for a replica that stopped beating — and records in each conversation
// what such a run leaves: the calls it had in flight (with an unknown
// outcome), the answer it was streaming, and a note that the server
// restarted. Nothing of a swept run is live, so it needs no run engine:
// only the stores, the hub (the run's watchers see it end) and the run
// engine's listeners.
package recovery

import (
	"context"
	"log/slog"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// Sessions is what the sweep reads and writes of conversations
// (core/sessions).
type Sessions interface {
	// History is the session's active branch.
	History(ctx context.Context, sessionID string) ([]domain.Entry, error)
	// Append adds entries at the session's tip in one transaction.
	Append(ctx context.Context, sessionID string, entries []domain.Entry) ([]domain.Entry, error)
}

// Deps are what the sweep works with.
type Deps struct {
	Runs     ports.RunStore
	Sessions Sessions
	Traces   ports.TraceStore
	// Observer hears of every span the sweep stores (nil: nobody).
	Observer ports.RunObserver
	// Hub tells each run's watchers, on every replica, that it ended.
	Hub *hub.Hub
	// Listeners are the run engine's (runs.Deps.Listeners): each is told
	// of every run the sweep ends.
	Listeners []runs.Listener
	// Replica is this process's id on the replica roll.
	Replica string
	Clock   ports.Clock
	IDs     ports.IDs
	Log     *slog.Logger
}

// Sweep ends orphaned runs.
type Sweep struct{ d Deps }

// New returns a Sweep.
func New(d Deps) *Sweep { return &Sweep{d: d} }

// restartedMsg is a swept run's error message.
const restartedMsg = "the server restarted during this run"

// RecoverOrphans ends the runs a crash left running — those of every
// replica but this one that has not beaten since aliveSince, and, at
// start (restarted), this replica's own previous life's — with a note in
// each session so the failure is visible. It returns the runs it ended.
func (s *Sweep) RecoverOrphans(ctx context.Context, aliveSince time.Time, restarted bool) ([]domain.Run, error) {
	orphans, err := s.d.Runs.FailOrphanedRuns(ctx, ports.Orphans{Self: s.d.Replica, Restarted: restarted, AliveSince: aliveSince,
		Code: domain.CodeServerRestarted, Message: restartedMsg, At: s.d.Clock.Now()})
	if err != nil {
		return nil, err
	}
	for _, r := range orphans {
		notes := s.land(ctx, r)
		if r.PartialOutput != "" {
			notes = append(notes, transcript.CutShort(r.ID, r.PartialOutput, "The answer was cut short by a restart."))
		}
		notes = append(notes, transcript.EndingNote(r.ID, domain.RunError, domain.CodeServerRestarted, "Run interrupted by a restart",
			"The server restarted during this run; it ended with an error.", nil))
		if _, err := s.d.Sessions.Append(ctx, r.SessionID, notes); err != nil && !errs.Is(err, errs.NotFound) {
			return orphans, err
		}
		s.d.Log.Warn("run ended by a restart", "run_id", r.ID, "session_id", r.SessionID, "replica", r.Replica)
		// Every replica's watchers see it end (one that was following it
		// through the replica that died, too).
		ended := r
		ended.Status, ended.ErrorCode, ended.ErrorMessage = domain.RunError, domain.CodeServerRestarted, restartedMsg
		ended.LastSeq = r.EndingSeq() // as the store numbered it
		if evs, ok := hub.StoredEnding(ended, 0); ok {
			s.d.Hub.Conclude(r.ID, r.SessionID, r.OwnerID, evs[len(evs)-1])
		}
		at := s.d.Clock.Now()
		r.Status, r.ErrorCode, r.ErrorMessage, r.EndedAt = domain.RunError, domain.CodeServerRestarted, restartedMsg, &at
		for _, l := range s.d.Listeners {
			l.Recovered(r)
		}
	}
	return orphans, nil
}

// land records, for a run a crash ended, the calls it had in flight: the
// turn's model items when they were not recorded, every call's output
// (unknown, unless a person had rejected it), and a function span per call
// under its agent's span, failed with the unknown outcome. Nothing is
// recorded twice: a flight whose results reached the conversation before
// the crash is left alone. It returns the entries to append.
func (s *Sweep) land(ctx context.Context, r domain.Run) []domain.Entry {
	if r.CallsInFlight == "" {
		return nil
	}
	f, err := transcript.Decode(r.CallsInFlight)
	if err != nil || len(f.Calls) == 0 {
		s.d.Log.Warn("a run's calls in flight are unreadable", "run_id", r.ID, "err", err)
		return nil
	}
	if history, err := s.d.Sessions.History(ctx, r.SessionID); err == nil && transcript.Answered(history, f.Calls[0].Call.CallID) {
		return nil
	}
	for _, sp := range f.Spans(r, s.d.Clock.Now(), s.d.IDs.NewID) {
		s.saveSpan(ctx, sp)
	}
	resp := ports.ModelResponse{Output: f.Turn}
	if f.Usage != nil {
		resp.Usage = *f.Usage
	}
	return transcript.Record(r.ID, f.Turn != nil, resp, f.Landing())
}

// saveSpan stores a span a restart records; a failure is logged.
func (s *Sweep) saveSpan(ctx context.Context, sp domain.Span) {
	if err := s.d.Traces.SaveSpan(ctx, sp); err != nil {
		s.d.Log.Warn("storing a span cut off by a restart failed", "run_id", sp.RunID, "kind", sp.Kind, "err", err)
		return
	}
	if s.d.Observer != nil {
		s.d.Observer.SpanSaved(sp)
	}
}

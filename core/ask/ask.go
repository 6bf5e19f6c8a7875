// Package ask asks an agent one question and waits for its answer: a new
// conversation, one run, its ending read from the run's stream. It serves
// the workbench's own MCP server (the ask_<agent> tools), on top of the
// run engine.
package ask

import (
	"context"
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/runs"
)

// Runs is the run engine as asking uses it (core/runs).
type Runs interface {
	// CheckRunCap refuses (rate_limited) an owner at max_runs_per_user.
	CheckRunCap(ctx context.Context, ownerID string) error
	// Start starts a run on the caller's session.
	Start(ctx context.Context, p domain.Principal, sessionID string, req runs.StartRequest) (domain.Run, error)
	// Subscribe attaches to a run's events after fromSeq.
	Subscribe(ctx context.Context, p domain.Principal, runID string, fromSeq int64) (*hub.Subscription, error)
}

// Sessions makes the conversation a question is asked in (core/sessions).
type Sessions interface {
	// Create starts an empty session owned by the caller.
	Create(ctx context.Context, p domain.Principal, name, agentID string) (domain.Session, error)
}

// Service asks agents.
type Service struct {
	runs     Runs
	sessions Sessions
}

// New returns a Service.
func New(r Runs, s Sessions) *Service { return &Service{runs: r, sessions: s} }

// Answer is how an asked run ended, or how far it got.
type Answer struct {
	SessionID, RunID string
	// Status is the run's state when Ask returned: completed, error or
	// cancelled — or running when ctx ended first (the run goes on).
	Status       domain.RunStatus
	Output       string
	ErrorCode    string
	ErrorMessage string
}

// Ask runs agentID once on a new session of the caller's (named name) with
// input, and waits for the run to end — through any approval pause, which
// a person decides in the workbench — or for ctx to end, which leaves the
// run going. Returns what Start and sessions.Create return.
func (s *Service) Ask(ctx context.Context, p domain.Principal, agentID, name, input string) (Answer, error) {
	// Refused past the cap before a conversation is made for it.
	if err := s.runs.CheckRunCap(ctx, p.User.ID); err != nil {
		return Answer{}, err
	}
	sess, err := s.sessions.Create(ctx, p, name, agentID)
	if err != nil {
		return Answer{}, err
	}
	run, err := s.runs.Start(ctx, p, sess.ID, runs.StartRequest{Input: input})
	if err != nil {
		return Answer{SessionID: sess.ID}, err
	}
	a := Answer{SessionID: sess.ID, RunID: run.ID, Status: domain.RunRunning}
	sub, err := s.runs.Subscribe(ctx, p, run.ID, 0)
	if err != nil {
		return a, err
	}
	defer sub.Close()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return a, ctx.Err()
		}
		switch ev.Type {
		case domain.EventOutput:
			var out domain.OutputPayload
			_ = json.Unmarshal(ev.Payload, &out)
			a.Status, a.Output = domain.RunCompleted, out.FinalOutput
			return a, nil
		case domain.EventError:
			var e domain.ErrorPayload
			_ = json.Unmarshal(ev.Payload, &e)
			a.Status, a.ErrorCode, a.ErrorMessage = domain.RunError, e.Code, e.Message
			return a, nil
		case domain.EventCancelled:
			a.Status = domain.RunCancelled
			return a, nil
		}
	}
}

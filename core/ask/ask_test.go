package ask_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/ask"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

var ann = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}

// engine answers every run with the events it is given, and counts what
// it was asked to do.
type engine struct {
	hub      *hub.Hub
	events   []domain.Event
	capped   bool
	started  []runs.StartRequest
	sessions []string
}

func (e *engine) CheckRunCap(context.Context, string) error {
	if e.capped {
		return errs.E(errs.RateLimited, "too many runs")
	}
	return nil
}

func (e *engine) Start(_ context.Context, _ domain.Principal, sessionID string, req runs.StartRequest) (domain.Run, error) {
	e.started = append(e.started, req)
	return domain.Run{ID: "run-" + sessionID, SessionID: sessionID}, nil
}

func (e *engine) Subscribe(_ context.Context, _ domain.Principal, runID string, _ int64) (*hub.Subscription, error) {
	return e.hub.Replay(runID, e.events), nil
}

func (e *engine) Create(_ context.Context, _ domain.Principal, name, agentID string) (domain.Session, error) {
	e.sessions = append(e.sessions, name+"/"+agentID)
	return domain.Session{ID: "s1", Name: name}, nil
}

func newEngine(events ...domain.Event) *engine {
	return &engine{hub: hub.New(hub.Options{}, porttest.NewClock(time.Unix(0, 0)), nil, nil), events: events}
}

func TestAskWaitsForTheRunsEnding(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		event domain.Event
		want  ask.Answer
	}{
		{"an answer", domain.NewEvent(domain.EventOutput, domain.OutputPayload{FinalOutput: "42"}),
			ask.Answer{Status: domain.RunCompleted, Output: "42"}},
		{"a failure", domain.NewEvent(domain.EventError, domain.ErrorPayload{Code: "model_error", Message: "down"}),
			ask.Answer{Status: domain.RunError, ErrorCode: "model_error", ErrorMessage: "down"}},
		{"a cancel", domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{}), ask.Answer{Status: domain.RunCancelled}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(domain.NewEvent(domain.EventStep, domain.DeltaPayload{Delta: "4"}), c.event)
			got, err := ask.New(e, e).Ask(ctx, ann, "agent-1", "question", "what is 6×7?")
			c.want.SessionID, c.want.RunID = "s1", "run-s1"
			if err != nil || got != c.want {
				t.Fatalf("Ask = %+v, %v; want %+v", got, err, c.want)
			}
			if len(e.sessions) != 1 || e.sessions[0] != "question/agent-1" || e.started[0].Input != "what is 6×7?" {
				t.Fatalf("sessions %v, runs %+v", e.sessions, e.started)
			}
		})
	}
}

func TestAskPastTheCapMakesNoConversation(t *testing.T) {
	e := newEngine()
	e.capped = true
	if _, err := ask.New(e, e).Ask(context.Background(), ann, "a", "q", "hi"); !errs.Is(err, errs.RateLimited) || len(e.sessions) != 0 {
		t.Fatalf("err %v, sessions %v: want rate_limited and no conversation", err, e.sessions)
	}
}

func TestAskLeavesARunGoingWhenItsCallerStopsWaiting(t *testing.T) {
	e := newEngine(domain.NewEvent(domain.EventStep, domain.DeltaPayload{Delta: "still thinking"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := ask.New(e, e).Ask(ctx, ann, "a", "q", "hi")
	if err == nil || got.Status != domain.RunRunning || got.RunID != "run-s1" {
		t.Fatalf("Ask = %+v, %v; want the run reported running with ctx's error", got, err)
	}
}

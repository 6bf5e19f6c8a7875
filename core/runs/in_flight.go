package runs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// unknownOutcome is what the model reads of a call a restart cut off: it
// may have taken effect, so it is not to be repeated blindly.
const unknownOutcome = "The server restarted during this call; its result is unknown. It may or may not have taken effect: " +
	"check before calling it again."

// stoppedOutcome is what the model reads of a call a cancel cut off.
const stoppedOutcome = "The run was stopped during this call; its result is unknown. It may or may not have taken effect: " +
	"check before calling it again."

// stoppedTurn is what a cancel among a turn's tool calls leaves of it: the
// model's items (unless a pause recorded them) and each call's output —
// its own when it finished, else what became of it (see runTools) — so the
// calls do not vanish from the conversation and the model's next turn
// finds every call answered. A finished call's output still passes the
// tool_output guardrails: one that trips is withheld.
func (s *Service) stoppedTurn(rc *runCtx, modelTurn bool, resp ports.ModelResponse, results []toolResult) []domain.Entry {
	for i, r := range results {
		if r.cutOff {
			continue
		}
		var trip *guardTrip
		if errors.As(s.checkStage(rc, domain.StageToolOutput, r.output, false), &trip) {
			results[i].output, results[i].isError = "Withheld: the "+trip.name+" guardrail tripped on this call's output.", true
			results[i].display = &domain.Display{Kind: "error", Title: r.name + " withheld", Summary: "Guardrail " + trip.name}
		}
	}
	return turnRecord(rc.lr.run.ID, modelTurn, resp, results)
}

// flight is a turn's tool calls as recorded before they run: what a
// restart needs to keep them, with an unknown outcome, if the server dies
// before their results are recorded. A call may reach the world (an MCP
// server, a sandbox) and then the process dies: without this the call
// vanishes from the conversation and the model may make it again.
type flight struct {
	// Turn is the model's items of the turn and Usage their cost, when
	// they are not recorded yet (a resumed turn's were, at its pause).
	Turn  []json.RawMessage `json:"turn,omitempty"`
	Usage *domain.Usage     `json:"usage,omitempty"`
	Calls []flightCall      `json:"calls"`
	// Agent is the open span of the agent running the turn: the parent of
	// the calls' spans, which the restart records too.
	Agent flightSpan `json:"agent"`
	At    time.Time  `json:"at"`
}

// flightCall is one call of the turn; a rejected one is answered already.
type flightCall struct {
	Call     domain.Item `json:"call"`
	Origin   string      `json:"origin,omitempty"`
	Rejected *string     `json:"rejected,omitempty"` // the person's reason, when they rejected it
}

// flightSpan is an open span as the restart records it.
type flightSpan struct {
	ID, Name, AgentConfigID string
	StartedAt               time.Time
}

// recordFlight writes the turn's calls before they run. A turn without
// calls writes nothing; a failed write is the run's failure, since the
// calls must not run unrecorded.
func (s *Service) recordFlight(rc *runCtx, modelTurn bool, resp ports.ModelResponse, calls []domain.Item, rejected map[string]string) error {
	if len(calls) == 0 {
		return nil
	}
	f := flight{At: s.d.Clock.Now()}
	if modelTurn {
		u := resp.Usage
		f.Turn, f.Usage = resp.Output, &u
	}
	if sp := rc.agentSpan; sp != nil {
		f.Agent = flightSpan{ID: sp.s.ID, Name: sp.s.Name, AgentConfigID: rc.agent.agent.ID, StartedAt: sp.s.StartedAt}
	}
	for _, c := range calls {
		fc := flightCall{Call: c}
		if spec, ok := offered(rc, c.Name); ok {
			fc.Origin = spec.Origin
		}
		if reason, no := rejected[c.CallID]; no {
			fc.Rejected = &reason
		}
		f.Calls = append(f.Calls, fc)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return s.d.Runs.RecordCallsInFlight(context.WithoutCancel(rc.lr.ctx), rc.lr.run.ID, string(raw))
}

// landFlight records, for a run a crash ended, the calls it had in flight:
// the turn's model items when they were not recorded, every call's output
// (unknown, unless a person had rejected it), and a function span per call
// under its agent's span, failed with the unknown outcome. Nothing is
// recorded twice: a flight whose results reached the conversation before
// the crash is left alone. It returns the entries to append.
func (s *Service) landFlight(ctx context.Context, r domain.Run) []domain.Entry {
	if r.CallsInFlight == "" {
		return nil
	}
	var f flight
	if err := json.Unmarshal([]byte(r.CallsInFlight), &f); err != nil || len(f.Calls) == 0 {
		s.d.Log.Warn("a run's calls in flight are unreadable", "run_id", r.ID, "err", err)
		return nil
	}
	if s.answered(ctx, r.SessionID, f.Calls[0].Call.CallID) {
		return nil
	}
	now := s.d.Clock.Now()
	results := make([]toolResult, 0, len(f.Calls))
	for _, fc := range f.Calls {
		c := fc.Call
		if fc.Rejected != nil {
			results = append(results, rejectedResult(c, *fc.Rejected))
			continue
		}
		results = append(results, toolResult{callID: c.CallID, name: c.Name, output: unknownOutcome, isError: true,
			display: &domain.Display{Kind: "interrupted", Title: c.Name + " cut off by a restart", Summary: "Result unknown"}})
		s.saveLandedSpan(ctx, domain.Span{ID: s.d.IDs.NewID(), SessionID: r.SessionID, RunID: r.ID, ParentID: f.Agent.ID,
			Kind: domain.SpanFunction, Name: c.Name, StartedAt: f.At, EndedAt: now, Error: unknownOutcome,
			Meta: map[string]any{"tool": c.Name, "call_id": c.CallID, "origin": fc.Origin, "outcome": "unknown"}})
	}
	if f.Agent.ID != "" {
		// The agent's span closes when its run does, which the crash
		// prevented: without it the calls' spans would have no parent.
		s.saveLandedSpan(ctx, domain.Span{ID: f.Agent.ID, SessionID: r.SessionID, RunID: r.ID, Kind: domain.SpanAgent,
			Name: f.Agent.Name, StartedAt: f.Agent.StartedAt, EndedAt: now, Error: "the server restarted during this run",
			Meta: map[string]any{"agent_config_id": f.Agent.AgentConfigID}})
	}
	resp := ports.ModelResponse{Output: f.Turn}
	if f.Usage != nil {
		resp.Usage = *f.Usage
	}
	return turnRecord(r.ID, f.Turn != nil, resp, results)
}

// answered reports whether the session's conversation holds an output of
// the call: its turn was recorded before the crash.
func (s *Service) answered(ctx context.Context, sessionID, callID string) bool {
	history, err := s.d.Sessions.History(ctx, sessionID)
	if err != nil {
		return false
	}
	for _, e := range history {
		if it := domain.ParseItem(e.Item); it.Kind() == domain.ItemFunctionCallOutput && it.CallID == callID {
			return true
		}
	}
	return false
}

// saveLandedSpan stores a span a restart records; a failure is logged.
func (s *Service) saveLandedSpan(ctx context.Context, sp domain.Span) {
	if err := s.d.Traces.SaveSpan(ctx, sp); err != nil {
		s.d.Log.Warn("storing a span cut off by a restart failed", "run_id", sp.RunID, "kind", sp.Kind, "err", err)
		return
	}
	if s.d.Observer != nil {
		s.d.Observer.SpanSaved(sp)
	}
}

package runs

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// stoppedTurn is what a cancel among a turn's tool calls leaves of it: the
// model's items (unless a pause recorded them) and each call's output —
// its own when it finished, else what became of it (see runTools) — so the
// calls do not vanish from the conversation and the model's next turn
// finds every call answered. A finished call's output still passes the
// tool_output guardrails: one that trips is withheld.
func (s *Service) stoppedTurn(rc *runCtx, modelTurn bool, resp ports.ModelResponse, results []transcript.Result) []domain.Entry {
	for i, r := range results {
		if r.CutOff {
			continue
		}
		var trip *guardTrip
		if errors.As(s.checkStage(rc, domain.StageToolOutput, r.Output, false), &trip) {
			results[i].Output, results[i].IsError = "Withheld: the "+trip.name+" guardrail tripped on this call's output.", true
			results[i].Display = &domain.Display{Kind: "error", Title: r.Name + " withheld", Summary: "Guardrail " + trip.name}
		}
	}
	return transcript.Record(rc.lr.run.ID, modelTurn, resp, results)
}

// recordFlight writes the turn's calls before they run. A turn without
// calls writes nothing; a failed write is the run's failure, since the
// calls must not run unrecorded.
func (s *Service) recordFlight(rc *runCtx, modelTurn bool, resp ports.ModelResponse, calls []domain.Item, rejected map[string]string) error {
	if len(calls) == 0 {
		return nil
	}
	f := transcript.Flight{At: s.d.Clock.Now()}
	if modelTurn {
		u := resp.Usage
		f.Turn, f.Usage = resp.Output, &u
	}
	if sp := rc.agentSpan; sp != nil {
		f.Agent = transcript.Span{ID: sp.Started().ID, Name: sp.Started().Name, AgentConfigID: rc.agent.Agent.ID, StartedAt: sp.Started().StartedAt}
	}
	for _, c := range calls {
		fc := transcript.Call{Call: c}
		if spec, ok := rc.agent.Offered(c.Name); ok {
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
	f, err := transcript.Decode(r.CallsInFlight)
	if err != nil || len(f.Calls) == 0 {
		s.d.Log.Warn("a run's calls in flight are unreadable", "run_id", r.ID, "err", err)
		return nil
	}
	if history, err := s.d.Sessions.History(ctx, r.SessionID); err == nil && transcript.Answered(history, f.Calls[0].Call.CallID) {
		return nil
	}
	results := f.Landing()
	for _, sp := range f.Spans(r, s.d.Clock.Now(), s.d.IDs.NewID) {
		s.saveLandedSpan(ctx, sp)
	}
	resp := ports.ModelResponse{Output: f.Turn}
	if f.Usage != nil {
		resp.Usage = *f.Usage
	}
	return transcript.Record(r.ID, f.Turn != nil, resp, results)
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

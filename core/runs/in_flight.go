package runs

import (
	"context"
	"errors"

	"github.com/agents-server/agents-server/core/agents"
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
		var trip *agents.GuardTrip
		if errors.As(rc.agent.Guard(domain.StageToolOutput, r.Output, false, rc.tr, rc.parentSpan()), &trip) {
			results[i].Output, results[i].IsError = "Withheld: the "+trip.Name+" guardrail tripped on this call's output.", true
			results[i].Display = &domain.Display{Kind: "error", Title: r.Name + " withheld", Summary: "Guardrail " + trip.Name}
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
	var agent transcript.Span
	if sp := rc.agentSpan; sp != nil {
		agent = transcript.Span{ID: sp.Started().ID, Name: sp.Started().Name, AgentConfigID: rc.agent.Agent.ID, StartedAt: sp.Started().StartedAt}
	}
	origin := func(name string) string { spec, _ := rc.agent.Offered(name); return spec.Origin }
	raw, err := transcript.NewFlight(s.d.Clock.Now(), modelTurn, resp.Output, resp.Usage, calls, origin, rejected, agent).Encode()
	if err != nil {
		return err
	}
	return s.d.Runs.RecordCallsInFlight(context.WithoutCancel(rc.lr.ctx), rc.lr.run.ID, raw)
}

package runs

import (
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

// compactTurn runs the turn boundary's pass for a run (forced after an
// overflow) and, when it folded, rebuilds the turn's input from the
// shrunk history.
func (s *Service) compactTurn(rc *runCtx, t *turnState, force bool) (models.Folded, error) {
	a := rc.agent.Agent
	if !a.Compaction.Enabled {
		return models.Folded{}, nil
	}
	lr := rc.lr
	parent := rc.parentSpan()
	f, err := s.d.Models.Fold(s.charged(lr.ctx, rc, domain.UsageCompaction), models.FoldRequest{SessionID: lr.run.SessionID, RunID: lr.run.ID, Agent: a,
		Endpoint: rc.agent.Endpoint, Force: force,
		Trace: func(model string, entries int) func(string, error) {
			sp := rc.tr.Span(domain.SpanCompaction, "compaction", parent).Meta("model", model).Meta("entries", entries)
			return func(summary string, err error) {
				sp.Set("summary", summary, true)
				sp.Finish(err)
			}
		},
		Progress: func(phase, detail string) {
			s.publish(lr, domain.EventCompaction, domain.CompactionPayload{RunID: lr.run.ID, Phase: phase, Detail: detail})
		}})
	if err != nil || !f.Done {
		return f, err
	}
	history, err := s.d.Sessions.History(lr.ctx, lr.run.SessionID)
	if err != nil {
		return f, err
	}
	t.input = sessions.ModelInput(history)
	return f, nil
}

// generateFitting makes the turn's model call; when the provider says the
// input overflows its window, a forced pass folds the history and the turn
// is tried once more — only if the history got strictly lighter (no turn
// budget spent). Otherwise the overflow ends the run.
func (s *Service) generateFitting(rc *runCtx, t *turnState) (ports.ModelResponse, error) {
	resp, err := s.generate(rc.lr.ctx, rc, rc.agent.Request(t.input, rc.planning, rc.toolChoice, rc.lr.run.SessionID))
	var me *ports.ModelError
	if err == nil || !errors.As(err, &me) || me.Kind != ports.ModelOverflow || !rc.agent.Agent.Compaction.Enabled {
		return resp, err
	}
	s.diagnostic(rc, "context_overflow", "upstream", "The model's context window overflowed: compacting the conversation and trying the turn again.", nil)
	f, cerr := s.compactTurn(rc, t, true)
	if cerr != nil {
		return resp, cerr
	}
	if !f.Done || f.After >= f.Before {
		return resp, err
	}
	return s.generate(rc.lr.ctx, rc, rc.agent.Request(t.input, rc.planning, rc.toolChoice, rc.lr.run.SessionID))
}

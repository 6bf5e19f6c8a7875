package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
)

// completed ends the run with a final output.
func (s *Service) completed(rc *runCtx, text string) outcome {
	return outcome{status: domain.RunCompleted, output: text,
		event: domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: rc.lr.run.ID, FinalOutput: text})}
}

// finalize decides how a final answer ends the run: a refusal or an output
// that does not match output_schema goes to its error handler (or fails the
// run), and the output guardrails get the last word.
func (s *Service) finalize(ctx context.Context, rc *runCtx, text, refusal string) outcome {
	h := rc.agent.Agent.ErrorHandlers
	if refusal != "" {
		return s.handled(ctx, rc, h.ModelRefusal, "the model refused: "+refusal)
	}
	if rc.agent.Schema != nil {
		if err := rc.agent.Schema.Check(text); err != nil {
			return s.handled(ctx, rc, h.InvalidFinalOutput, "the final output "+err.Error())
		}
	}
	if err := rc.agent.Guard(domain.StageOutput, text, false, rc.tr, rc.parentSpan()); err != nil {
		return s.fail(rc, err)
	}
	return s.completed(rc, text)
}

// handled applies an error handler — a static final output, recorded as an
// assistant message unless excluded from history — or fails the run with
// model_behavior when the agent has none.
func (s *Service) handled(ctx context.Context, rc *runCtx, h *domain.ErrorHandler, why string) outcome {
	if h == nil {
		return s.failed(rc.lr, domain.CodeModelBehavior, why)
	}
	text := string(h.FinalOutput)
	var str string
	if json.Unmarshal(h.FinalOutput, &str) == nil {
		text = str
	}
	if !h.ExcludeFromHistory {
		e := domain.Entry{Kind: domain.KindItem, Source: domain.SourceErrorHandler, RunID: rc.lr.run.ID,
			Item: domain.AssistantMessage("", text), Display: &domain.Display{Kind: "error_handler", Title: "Static answer", Summary: why}}
		if _, err := s.d.Sessions.Append(context.WithoutCancel(ctx), rc.lr.run.SessionID, []domain.Entry{e}); err != nil {
			return s.fail(rc, err)
		}
	}
	s.diagnostic(rc, "error_handler", "", why, map[string]string{"handled_by": "static final output"})
	return s.completed(rc, text)
}

// maxTurns ends a run that used every turn: its handler's output, or an
// error.
func (s *Service) maxTurns(ctx context.Context, rc *runCtx) outcome {
	why := fmt.Sprintf("the agent used all %d turns without a final answer", rc.agent.MaxTurns())
	if h := rc.agent.Agent.ErrorHandlers.MaxTurns; h != nil {
		return s.handled(ctx, rc, h, why)
	}
	return s.failed(rc.lr, domain.CodeMaxTurnsExceeded, why)
}

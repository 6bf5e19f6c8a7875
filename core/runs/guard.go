package runs

import (
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
)

// guardTrip is a guardrail that tripped: the run ends with
// guardrail_tripwire naming it and the stage.
type guardTrip struct {
	name, stage, reason string
}

func (g *guardTrip) Error() string {
	return fmt.Sprintf("guardrail %s tripped at the %s stage: %s", g.name, g.stage, g.reason)
}

// checkStage runs the agent's guardrails for a stage over text, each as a
// span, and returns the first trip. At the input stage, gate picks the
// blocking guardrails (checked before the first model call) or the others
// (which race it).
func (s *Service) checkStage(rc *runCtx, stage domain.GuardrailStage, text string, gate bool) error {
	if text == "" {
		return nil
	}
	for _, c := range rc.agent.Checks {
		g := c.Guardrail()
		if !c.Applies(stage) || (stage == domain.StageInput && g.Blocking != gate) {
			continue
		}
		sp := rc.tr.Span(domain.SpanGuardrail, g.Name, rc.parentSpan()).Meta("guardrail", g.Name).Meta("stage", string(stage))
		v := c.Evaluate(stage, text)
		sp.Meta("tripped", v.Tripped).Set("reason", v.Reason, true)
		if v.Tripped {
			trip := &guardTrip{name: g.Name, stage: string(stage), reason: v.Reason}
			sp.Finish(trip)
			return trip
		}
		sp.Finish(nil)
	}
	return nil
}

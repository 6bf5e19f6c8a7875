package agents

import (
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/traces"
)

// GuardTrip is a guardrail that tripped: the run ends with
// guardrail_tripwire naming it and the stage.
type GuardTrip struct {
	Name, Stage, Reason string
}

// Error says which guardrail tripped, where and why.
func (g *GuardTrip) Error() string {
	return fmt.Sprintf("guardrail %s tripped at the %s stage: %s", g.Name, g.Stage, g.Reason)
}

// Guard runs the agent's guardrails for a stage over text, each as a span
// of rec under parent, and returns the first trip (a *GuardTrip). At the
// input stage, blocking picks the blocking guardrails (checked before the
// first model call) or the others (which race it).
func (b *Built) Guard(stage domain.GuardrailStage, text string, blocking bool, rec *traces.Recorder, parent string) error {
	if text == "" {
		return nil
	}
	for _, c := range b.Checks {
		g := c.Guardrail()
		if !c.Applies(stage) || (stage == domain.StageInput && g.Blocking != blocking) {
			continue
		}
		sp := rec.Span(domain.SpanGuardrail, g.Name, parent).Meta("guardrail", g.Name).Meta("stage", string(stage))
		v := c.Evaluate(stage, text)
		sp.Meta("tripped", v.Tripped).Set("reason", v.Reason, true)
		if v.Tripped {
			trip := &GuardTrip{Name: g.Name, Stage: string(stage), Reason: v.Reason}
			sp.Finish(trip)
			return trip
		}
		sp.Finish(nil)
	}
	return nil
}

package workflows

import (
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

// StepTurn is the input that starts a step's run. The brief leads the
// first step only (later steps read it in the transcript); a retry leads
// with why it is one; a gate is told how to report.
func StepTurn(st domain.WorkflowState, step domain.WorkflowStep, retryNote string) string {
	var parts []string
	if retryNote != "" {
		parts = append(parts, retryNote)
	}
	if len(st.Steps) > 0 && st.Steps[0].ID == step.ID && len(st.StepRuns) == 0 && strings.TrimSpace(st.Input) != "" {
		parts = append(parts, st.Input)
	}
	if p := strings.TrimSpace(step.Prompt); p != "" {
		parts = append(parts, p)
	}
	if step.Gate {
		parts = append(parts, GateInstruction(step))
	}
	return strings.Join(parts, "\n\n")
}

// GateInstruction is what a gate step's prompt is given so its verdict can
// be read.
func GateInstruction(step domain.WorkflowStep) string {
	return "End your answer with a line holding only " + step.PassWord() + " if the check passed, or " +
		step.FailWord() + " if it did not."
}

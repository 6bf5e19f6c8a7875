package workflows

import (
	"fmt"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// Spent is what an execution has used so far: tokens are the input plus
// output of every model call on its session, Active the step runs' own time
// (a wait on a person's approval costs nothing).
type Spent struct {
	Tokens int64
	Active time.Duration
}

// BeforeLaunch says why the next launch (a step or a retry) may not
// happen, or "" when it may. It is asked before every launch, never
// mid-run: a run under way finishes.
func BeforeLaunch(st domain.WorkflowState, spent Spent) string {
	launches := len(st.StepRuns)
	b := st.Budget
	switch {
	case launches >= domain.MaxStepRuns:
		return fmt.Sprintf("step run limit reached: %d launches (at most %d per execution)", launches, domain.MaxStepRuns)
	case b.MaxSteps > 0 && launches >= b.MaxSteps:
		return fmt.Sprintf("budget exhausted: %d of %d steps", launches+1, b.MaxSteps)
	case b.MaxTokens > 0 && spent.Tokens >= b.MaxTokens:
		return fmt.Sprintf("budget exhausted: %d of %d tokens", spent.Tokens, b.MaxTokens)
	case b.MaxMinutes > 0 && spent.Active >= time.Duration(b.MaxMinutes)*time.Minute:
		return fmt.Sprintf("budget exhausted: %d of %d minutes", int(spent.Active/time.Minute), b.MaxMinutes)
	}
	return ""
}

// Progress is where an execution stands, for task_status: "step 2/3
// (verify)".
func Progress(st domain.WorkflowState) string {
	i := indexOf(st.Steps, st.StepID)
	if i < 0 {
		return fmt.Sprintf("%d steps", len(st.Steps))
	}
	return fmt.Sprintf("step %d/%d (%s)", i+1, len(st.Steps), st.Steps[i].Name)
}

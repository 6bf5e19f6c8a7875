package workflows

import (
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
)

// Action is what the driver does after a step's run ends.
type Action int

// The actions: launch the next step, finish the execution, or fail it.
const (
	Launch Action = iota + 1
	Finish
	Failed
)

// Outcome is how a step's run ended: whether it errored, and its final
// output (a gate's report).
type Outcome struct {
	Errored bool
	Output  string
}

// Decision is the definition's answer to a finished step: the ending the
// launch log records for it, what to do, the next step (Launch), why
// (Failed), and the backward edge taken, whose lap count rises.
type Decision struct {
	Ending string
	Action Action
	Next   string
	Reason string
	Edge   string
}

// Next decides where an execution goes once its current step (st.StepID)
// ended with o. It does not change st; the driver applies the decision.
func Next(st domain.WorkflowState, o Outcome) Decision {
	i := indexOf(st.Steps, st.StepID)
	if i < 0 {
		return Decision{Ending: domain.StepFailed, Action: Failed, Reason: fmt.Sprintf("the step %q is not in this workflow", st.StepID)}
	}
	step := st.Steps[i]
	var d Decision
	success := !o.Errored
	switch {
	case o.Errored:
		d.Ending = domain.StepFailed
	case step.Gate:
		switch ReadVerdict(o.Output, step.PassWord(), step.FailWord()) {
		case Pass:
			d.Ending = domain.StepPass
		case Fail:
			d.Ending, success = domain.StepFail, false
		default:
			return Decision{Ending: domain.StepFailed, Action: Failed, Reason: fmt.Sprintf(
				"the gate %q reported no verdict: its answer must end with %s or %s", step.Name, step.PassWord(), step.FailWord())}
		}
	default:
		d.Ending = domain.StepCompleted
	}
	target := step.OnSuccess
	if !success {
		target = step.OnFailure
	}
	switch {
	case target == "" && success && i == len(st.Steps)-1, target == domain.WorkflowEnd && success:
		d.Action = Finish
		return d
	case target == "" && success:
		d.Action, d.Next = Launch, st.Steps[i+1].ID
		return d
	case target == "" || target == domain.WorkflowEnd:
		d.Action = Failed
		d.Reason = fmt.Sprintf("the step %q %s", step.Name, failedHow(d.Ending))
		return d
	}
	j := indexOf(st.Steps, target)
	if j < 0 {
		return Decision{Ending: d.Ending, Action: Failed, Reason: fmt.Sprintf("the step %q leads to %q, which is not in this workflow", step.Name, target)}
	}
	if j <= i { // a backward edge: a lap
		d.Edge = step.ID + "→" + target
		if n := st.Laps[d.Edge]; n >= st.Budget.Laps() {
			return Decision{Ending: d.Ending, Action: Failed, Edge: d.Edge,
				Reason: fmt.Sprintf("loop bound reached: %s → %s looped %d times", step.Name, st.Steps[j].Name, n)}
		}
	}
	d.Action, d.Next = Launch, target
	return d
}

func failedHow(ending string) string {
	if ending == domain.StepFail {
		return "reported a failure and names no step to go to"
	}
	return "failed"
}

func indexOf(steps []domain.WorkflowStep, id string) int {
	for i, s := range steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}

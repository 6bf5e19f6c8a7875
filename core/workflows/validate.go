package workflows

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Definition bounds.
const (
	MaxSteps       = 30
	MaxNameLen     = 100
	MaxPromptBytes = 64 << 10
)

// AssignIDs gives each step without an id a new one (ids are stable: a
// step keeps its id through every edit), then rewrites edges that name a
// step by its name into its id, so a definition may be written by names.
func AssignIDs(steps []domain.WorkflowStep, newID func() string) []domain.WorkflowStep {
	out := append([]domain.WorkflowStep(nil), steps...)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = newID()
		}
	}
	byName := map[string]string{}
	for _, s := range out {
		byName[strings.ToLower(strings.TrimSpace(s.Name))] = s.ID
	}
	resolve := func(edge string) string {
		if id, ok := byName[strings.ToLower(strings.TrimSpace(edge))]; ok && indexOf(out, edge) < 0 {
			return id
		}
		return edge
	}
	for i := range out {
		out[i].OnSuccess, out[i].OnFailure = resolve(out[i].OnSuccess), resolve(out[i].OnFailure)
	}
	return out
}

// Validate checks a definition and says what is wrong with each field:
// a name and a description, one to MaxSteps steps with unique names (end is
// reserved), an agent the owner may use on each (agentOK), edges naming a
// step or end, every step reachable from the first, a budget of no
// negative figures. Returns validation.
func Validate(w domain.WorkflowSpec, agentOK func(id string) bool) error {
	var f errs.FieldErrors
	switch name := strings.TrimSpace(w.Name); {
	case name == "":
		f.Add("name", "is required")
	case len(name) > MaxNameLen:
		f.Add("name", "must be at most %d characters", MaxNameLen)
	}
	if strings.TrimSpace(w.Description) == "" {
		f.Add("description", "is required: it is what an agent matches a request against")
	}
	switch n := len(w.Steps); {
	case n == 0:
		f.Add("steps", "a workflow needs at least one step")
	case n > MaxSteps:
		f.Add("steps", "a workflow has at most %d steps, not %d", MaxSteps, n)
	}
	seen := map[string]int{}
	ids := map[string]bool{}
	for i, s := range w.Steps {
		at := fmt.Sprintf("steps[%d].", i)
		name := strings.ToLower(strings.TrimSpace(s.Name))
		switch {
		case name == "":
			f.Add(at+"name", "is required")
		case name == domain.WorkflowEnd:
			f.Add(at+"name", "%q is reserved: it is the edge that finishes", domain.WorkflowEnd)
		default:
			if j, dup := seen[name]; dup {
				f.Add(at+"name", "%q is also the name of step %d (names are unique, whatever their case)", s.Name, j+1)
			}
			seen[name] = i
		}
		if ids[s.ID] {
			f.Add(at+"id", "%q is the id of another step", s.ID)
		}
		ids[s.ID] = true
		if s.Agent == "" {
			f.Add(at+"agent", "is required")
		} else if agentOK != nil && !agentOK(s.Agent) {
			f.Add(at+"agent", "no such agent (or not one you may use)")
		}
		if strings.TrimSpace(s.Prompt) == "" {
			f.Add(at+"prompt", "is required: it starts the step's turn")
		} else if len(s.Prompt) > MaxPromptBytes {
			f.Add(at+"prompt", "must be at most %d bytes", MaxPromptBytes)
		}
		if s.Gate && strings.EqualFold(strings.TrimSpace(s.PassWord()), strings.TrimSpace(s.FailWord())) {
			f.Add(at+"gate_fail", "must differ from the pass word")
		}
		for _, e := range []struct{ field, to string }{{"on_success", s.OnSuccess}, {"on_failure", s.OnFailure}} {
			if e.to != "" && e.to != domain.WorkflowEnd && indexOf(w.Steps, e.to) < 0 {
				f.Add(at+e.field, "%q is neither a step of this workflow nor %q", e.to, domain.WorkflowEnd)
			}
		}
	}
	for _, i := range unreachable(w.Steps) {
		f.Add(fmt.Sprintf("steps[%d].name", i), "step %q is unreachable: no step leads to it", w.Steps[i].Name)
	}
	b := w.Budget
	for _, c := range []struct {
		field string
		v     int64
	}{{"max_steps", int64(b.MaxSteps)}, {"max_tokens", b.MaxTokens}, {"max_minutes", int64(b.MaxMinutes)}, {"max_laps", int64(b.MaxLaps)}} {
		if c.v < 0 {
			f.Add("budget."+c.field, "must not be negative (0 is no bound)")
		}
	}
	if b.MaxSteps > domain.MaxStepRuns {
		f.Add("budget.max_steps", "must be at most %d (every execution stops there anyway)", domain.MaxStepRuns)
	}
	return f.Err()
}

// unreachable lists the steps no path from the first reaches: success
// falls through (or takes on_success), failure takes on_failure.
func unreachable(steps []domain.WorkflowStep) []int {
	if len(steps) == 0 {
		return nil
	}
	reached := make([]bool, len(steps))
	queue := []int{0}
	reached[0] = true
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		s := steps[i]
		var next []int
		switch {
		case s.OnSuccess == "" && i+1 < len(steps):
			next = append(next, i+1)
		case s.OnSuccess != "" && s.OnSuccess != domain.WorkflowEnd:
			next = append(next, indexOf(steps, s.OnSuccess))
		}
		if s.OnFailure != "" && s.OnFailure != domain.WorkflowEnd {
			next = append(next, indexOf(steps, s.OnFailure))
		}
		for _, j := range next {
			if j >= 0 && !reached[j] {
				reached[j] = true
				queue = append(queue, j)
			}
		}
	}
	var out []int
	for i, r := range reached {
		if !r {
			out = append(out, i)
		}
	}
	return out
}

func fieldAt(i int, field string) string { return fmt.Sprintf("steps[%d].%s", i, field) }

// agentNames lists the agents' names.
func agentNames(m map[string]domain.Agent) []string {
	out := make([]string, 0, len(m))
	for _, a := range m {
		out = append(out, a.Name)
	}
	return out
}

func sortedNames(names []string) []string {
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return names
}

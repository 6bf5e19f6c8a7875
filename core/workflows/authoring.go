package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Authoring by agents (invariant 39): definitions are read and written BY
// NAME — steps, agents and edges — never by id, and only the person's own
// private workflows are written (an update when the name is theirs, a new
// one otherwise). The run engine gates every save behind the person's
// approval; Preview is what that approval shows.

// NamedStep is a step as an agent writes it.
type NamedStep struct {
	Name          string `json:"name"`
	Agent         string `json:"agent"`
	Prompt        string `json:"prompt"`
	Gate          bool   `json:"gate,omitempty"`
	GatePass      string `json:"gate_pass,omitempty"`
	GateFail      string `json:"gate_fail,omitempty"`
	PauseBefore   bool   `json:"pause_before,omitempty"`
	CompactBefore bool   `json:"compact_before,omitempty"`
	OnSuccess     string `json:"on_success,omitempty"`
	OnFailure     string `json:"on_failure,omitempty"`
}

// NamedSpec is a definition as an agent writes it.
type NamedSpec struct {
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Steps       []NamedStep           `json:"steps"`
	Budget      domain.WorkflowBudget `json:"budget"`
}

// parseNamed decodes save_workflow's arguments strictly.
func parseNamed(args string) (NamedSpec, error) {
	var n NamedSpec
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return n, errs.E(errs.Validation, "save_workflow takes {name, description, steps: [{name, agent, prompt, …}], budget?}: %v", err)
	}
	return n, nil
}

// usableAgents maps the agents a user may put in a step, by lowercase
// name (their own private one over a global one of the same name).
func usableAgents(ctx context.Context, r ports.AgentReader, ownerID string) (map[string]domain.Agent, error) {
	all, err := r.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	owner := domain.Principal{User: domain.User{ID: ownerID}}
	holder := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: ownerID}
	out := map[string]domain.Agent{}
	for _, a := range all {
		if !a.VisibleTo(owner) || !holder.MayReference(a.Ownership) {
			continue
		}
		key := strings.ToLower(a.Name)
		if cur, ok := out[key]; !ok || (cur.Scope == domain.ScopeGlobal && a.Scope == domain.ScopePrivate) {
			out[key] = a
		}
	}
	return out, nil
}

// AgentNames lists, for save_workflow's description, the agents a user
// may put in a step.
func (s *Service) AgentNames(ctx context.Context, ownerID string) []string {
	agents, err := usableAgents(ctx, s.store, ownerID)
	if err != nil {
		return nil
	}
	return sortedNames(agentNames(agents))
}

// own returns the user's own private workflow of that name, if any.
func own(ctx context.Context, r ports.WorkflowReader, ownerID, name string) (*domain.Workflow, error) {
	all, err := r.ListWorkflows(ctx)
	if err != nil {
		return nil, err
	}
	for i, w := range all {
		if w.Scope == domain.ScopePrivate && w.OwnerID == ownerID && strings.EqualFold(w.Name, strings.TrimSpace(name)) {
			return &all[i], nil
		}
	}
	return nil, nil
}

// resolve turns a named definition into a spec: agents by name, step ids
// kept from the stored definition of that name (by step name), edges by
// step name. It returns the stored workflow it would replace (nil for a
// new one). Returns validation naming every field.
func (s *Service) resolve(ctx context.Context, r ports.WorkflowView, ownerID string, n NamedSpec) (domain.WorkflowSpec, *domain.Workflow, error) {
	agents, err := usableAgents(ctx, r, ownerID)
	if err != nil {
		return domain.WorkflowSpec{}, nil, err
	}
	existing, err := own(ctx, r, ownerID, n.Name)
	if err != nil {
		return domain.WorkflowSpec{}, nil, err
	}
	ids := map[string]string{}
	var stored []domain.WorkflowStep
	if existing != nil {
		stored = existing.Steps
		for _, st := range stored {
			ids[strings.ToLower(st.Name)] = st.ID
		}
	}
	spec := domain.WorkflowSpec{Name: n.Name, Description: n.Description, Budget: n.Budget}
	var f errs.FieldErrors
	for i, ns := range n.Steps {
		a, ok := agents[strings.ToLower(strings.TrimSpace(ns.Agent))]
		if !ok {
			f.Add(fieldAt(i, "agent"), "there is no agent named %q: the agents on offer are %s", ns.Agent,
				strings.Join(sortedNames(agentNames(agents)), ", "))
		}
		spec.Steps = append(spec.Steps, domain.WorkflowStep{ID: ids[strings.ToLower(strings.TrimSpace(ns.Name))], Name: ns.Name,
			Agent: a.ID, Prompt: ns.Prompt, Gate: ns.Gate, GatePass: ns.GatePass, GateFail: ns.GateFail, PauseBefore: ns.PauseBefore,
			CompactBefore: ns.CompactBefore, OnSuccess: ns.OnSuccess, OnFailure: ns.OnFailure})
	}
	if err := f.Err(); err != nil {
		return spec, existing, err
	}
	holder := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: ownerID}
	spec, err = s.prepare(ctx, r, holder, spec, stored)
	return spec, existing, err
}

// CheckSave says whether save_workflow's arguments could be saved, before
// anyone is asked: validation for a definition that cannot be, any other
// error for a fault (the person is still asked).
func (s *Service) CheckSave(ctx context.Context, ownerID, args string) error {
	n, err := parseNamed(args)
	if err != nil {
		return err
	}
	_, _, err = s.resolve(ctx, s.store, ownerID, n)
	return err
}

// SaveNamed saves an approved save_workflow call: the user's private
// workflow of that name is replaced, or a new one created. It says what it
// did.
func (s *Service) SaveNamed(ctx context.Context, ownerID, args string) (string, error) {
	n, err := parseNamed(args)
	if err != nil {
		return "", err
	}
	var out domain.Workflow
	var replaced bool
	actx, rec := audit.Stage(ctx, s.clock.Now(), "workflow.create", audit.Object{Kind: "workflow"})
	err = s.store.InWorkflowTx(actx, func(tx ports.WorkflowTx) error {
		spec, existing, err := s.resolve(ctx, tx, ownerID, n)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if existing != nil {
			replaced = true
			out = *existing
			out.WorkflowSpec, out.UpdatedAt = spec, now
			rec.Action, rec.ObjectID = "workflow.update", out.ID
			audit.Changed(rec, out.Name, existing.WorkflowSpec, spec)
			return tx.UpdateWorkflow(ctx, out)
		}
		out = domain.Workflow{ID: s.ids.NewID(), Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: ownerID},
			WorkflowSpec: spec, CreatedAt: now, UpdatedAt: now}
		rec.ObjectID = out.ID
		audit.Changed(rec, out.Name, nil, spec)
		return tx.InsertWorkflow(ctx, out)
	})
	if err != nil {
		return "", err
	}
	how := "Created"
	if replaced {
		how = "Updated"
	}
	return fmt.Sprintf("%s workflow %q (%d steps). spawn_task(workflow=%q, prompt=<brief>) starts it.", how, out.Name, len(out.Steps), out.Name), nil
}

// GetNamed is get_workflow: a definition the user may use, by name, with
// its steps' agents and edges by name, as JSON.
func (s *Service) GetNamed(ctx context.Context, ownerID, name string) (string, error) {
	w, err := s.ByName(ctx, ownerID, name)
	if err != nil {
		return "", err
	}
	n := s.named(ctx, w.WorkflowSpec)
	b, _ := json.MarshalIndent(n, "", "  ") // plain data: cannot fail
	return string(b), nil
}

// named writes a spec by names: agents by their name, edges by step name.
func (s *Service) named(ctx context.Context, spec domain.WorkflowSpec) NamedSpec {
	names := map[string]string{}
	for _, st := range spec.Steps {
		names[st.ID] = st.Name
	}
	edge := func(to string) string {
		if n, ok := names[to]; ok {
			return n
		}
		return to
	}
	n := NamedSpec{Name: spec.Name, Description: spec.Description, Budget: spec.Budget, Steps: []NamedStep{}}
	for _, st := range spec.Steps {
		agent := st.Agent
		if a, err := s.store.FindAgent(ctx, st.Agent); err == nil {
			agent = a.Name
		}
		n.Steps = append(n.Steps, NamedStep{Name: st.Name, Agent: agent, Prompt: st.Prompt, Gate: st.Gate, GatePass: st.GatePass,
			GateFail: st.GateFail, PauseBefore: st.PauseBefore, CompactBefore: st.CompactBefore, OnSuccess: edge(st.OnSuccess),
			OnFailure: edge(st.OnFailure)})
	}
	return n
}

// Preview is what a save_workflow approval shows: the proposed definition
// drawn as text and, when it replaces one, the stored one diffed against
// it line by line.
func (s *Service) Preview(ctx context.Context, ownerID, args string) (*domain.WorkflowPreview, error) {
	n, err := parseNamed(args)
	if err != nil {
		return nil, err
	}
	proposed := Draw(n)
	p := &domain.WorkflowPreview{Definition: proposed}
	existing, err := own(ctx, s.store, ownerID, n.Name)
	if err != nil || existing == nil {
		return p, err
	}
	p.Replaces = true
	p.Diff = LineDiff(strings.Split(Draw(s.named(ctx, existing.WorkflowSpec)), "\n"), strings.Split(proposed, "\n"))
	return p, nil
}

// Draw writes a named definition as text, one fact a line, so a diff of
// two drawings says what changed.
func Draw(n NamedSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s\n", n.Name)
	fmt.Fprintf(&b, "description: %s\n", strings.Join(strings.Fields(n.Description), " "))
	bu := n.Budget
	fmt.Fprintf(&b, "budget: max_steps %d, max_tokens %d, max_minutes %d, max_laps %d\n", bu.MaxSteps, bu.MaxTokens, bu.MaxMinutes, bu.Laps())
	for i, st := range n.Steps {
		next := "next step"
		if i == len(n.Steps)-1 {
			next = "end"
		}
		success, failure := orDefault(st.OnSuccess, next), orDefault(st.OnFailure, "fail the workflow")
		fmt.Fprintf(&b, "%d. %s — agent %s\n", i+1, st.Name, st.Agent)
		for _, line := range strings.Split(strings.TrimSpace(st.Prompt), "\n") {
			fmt.Fprintf(&b, "   | %s\n", line)
		}
		if st.Gate {
			fmt.Fprintf(&b, "   gate: %s → %s, %s → %s\n", orDefault(st.GatePass, domain.DefaultGatePass), success,
				orDefault(st.GateFail, domain.DefaultGateFail), failure)
		} else {
			fmt.Fprintf(&b, "   on success → %s; on failure → %s\n", success, failure)
		}
		if st.PauseBefore {
			b.WriteString("   pause before: a person approves\n")
		}
		if st.CompactBefore {
			b.WriteString("   compact before\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// LineDiff is the line-by-line difference of a and b (longest common
// subsequence): unchanged lines, then what went and what came, in order.
func LineDiff(a, b []string) []domain.DiffLine {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []domain.DiffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, domain.DiffLine{Op: domain.DiffSame, Text: a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, domain.DiffLine{Op: domain.DiffRemoved, Text: a[i]})
			i++
		default:
			out = append(out, domain.DiffLine{Op: domain.DiffAdded, Text: b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, domain.DiffLine{Op: domain.DiffRemoved, Text: a[i]})
	}
	for ; j < m; j++ {
		out = append(out, domain.DiffLine{Op: domain.DiffAdded, Text: b[j]})
	}
	return out
}

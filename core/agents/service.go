// Package agents manages agent configurations: strict validation of the
// whole config shape, the references an agent makes (its provider, fallback
// providers, guardrails, handoff targets, skills) under the ownership rules,
// and the tool surface an agent would get.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

const what = "agent"

// SkillExists answers whether a skill id exists and may be used by an agent
// held as holder. Until the skills module is wired, none exists.
type SkillExists func(ctx context.Context, holder domain.Ownership, id string) (bool, error)

// MCPCatalog is what agents need of MCP servers: whether a selected tool
// name may be saved, and the live tools behind selected names.
type MCPCatalog interface {
	CheckSelectable(ctx context.Context, holder domain.Ownership, name string) error
	Resolve(ctx context.Context, holder domain.Ownership, user string, names []string) ([]mcp.Tool, []mcp.Unavailable, error)
}

// Service manages agents.
type Service struct {
	store   ports.AgentStore
	ids     ports.IDs
	clock   ports.Clock
	skills  SkillExists
	mcp     MCPCatalog
	natives tools.Natives
	types   func(string) (providers.TypeInfo, bool) // a provider type's registry row
}

// Deps are what a Service needs.
type Deps struct {
	Store ports.AgentStore
	IDs   ports.IDs
	Clock ports.Clock
	// Skills says whether a skill id resolves (nil: none does).
	Skills SkillExists
	// MCP lets agents select the tools of MCP servers (nil: only built-in
	// tool names are accepted).
	MCP MCPCatalog
	// Natives are the embedding program's Go tools agents may select.
	Natives tools.Natives
	// ProviderTypes reads provider types from the workbench's own table
	// (the registry and the embedding program's types), so an agent's
	// knobs are checked against what its provider's type supports (nil:
	// the registry alone).
	ProviderTypes func(string) (providers.TypeInfo, bool)
}

// New returns a Service.
func New(d Deps) *Service {
	if d.Skills == nil {
		d.Skills = func(context.Context, domain.Ownership, string) (bool, error) { return false, nil }
	}
	if d.ProviderTypes == nil {
		d.ProviderTypes = providers.LookupType
	}
	return &Service{store: d.Store, ids: d.IDs, clock: d.Clock, skills: d.Skills, mcp: d.MCP, natives: d.Natives, types: d.ProviderTypes}
}

// Selectable returns the tools an agent may name in its tools list besides
// MCP ones: the built-ins, then the embedding program's Go tools by name.
func (s *Service) Selectable() []tools.Spec {
	out := slices.Clone(tools.Selectable)
	names := slices.Sorted(maps.Keys(s.natives))
	for _, n := range names {
		out = append(out, s.natives[n].Spec)
	}
	return out
}

// List returns the agents the caller can see: others' shared ones first,
// then the caller's own, newest first within each.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]domain.Agent, error) {
	all, err := s.store.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	return domain.VisibleOrdered(all, p, func(a domain.Agent) domain.Ownership { return a.Ownership }), nil
}

// Get returns one agent; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Agent, error) {
	a, err := s.store.FindAgent(ctx, id)
	if err != nil {
		return a, err
	}
	return a, a.CheckRead(p, what)
}

// Create adds an agent owned by the caller, private unless an admin asks for
// global. Returns validation (every offending field), forbidden, conflict.
func (s *Service) Create(ctx context.Context, p domain.Principal, scope domain.Scope, spec domain.AgentSpec) (domain.Agent, error) {
	if scope == "" {
		scope = domain.ScopePrivate
	}
	if err := domain.CheckCreate(p, scope, what); err != nil {
		return domain.Agent{}, err
	}
	now := s.clock.Now()
	a := domain.Agent{ID: s.ids.NewID(), Ownership: domain.Ownership{Scope: scope, OwnerID: p.User.ID},
		AgentSpec: normalize(spec), CreatedAt: now, UpdatedAt: now}
	actx := audit.Change(ctx, now, "agent.create", audit.Object{Kind: "agent", ID: a.ID, Name: a.Name}, audit.Diff(nil, a.AgentSpec)...)
	err := s.store.InAgentTx(actx, func(tx ports.AgentTx) error {
		if err := s.validate(ctx, tx, a); err != nil {
			return err
		}
		return tx.InsertAgent(ctx, a)
	})
	return a, err
}

// Update replaces an agent's spec (PUT: an omitted field becomes its zero
// value). Scope and owner do not move here. Returns not_found, forbidden,
// validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, spec domain.AgentSpec) (domain.Agent, error) {
	var out domain.Agent
	actx, rec := audit.Stage(ctx, s.clock.Now(), "agent.update", audit.Object{Kind: "agent", ID: id})
	err := s.store.InAgentTx(actx, func(tx ports.AgentTx) error {
		a, err := tx.FindAgent(ctx, id)
		if err != nil {
			return err
		}
		if err := a.CheckUpdate(p, what); err != nil {
			return err
		}
		before := a.AgentSpec
		a.AgentSpec, a.UpdatedAt = normalize(spec), s.clock.Now()
		audit.Changed(rec, a.Name, before, a.AgentSpec)
		if err := s.validate(ctx, tx, a); err != nil {
			return err
		}
		out = a
		return tx.UpdateAgent(ctx, a)
	})
	return out, err
}

// Delete removes an agent (and its memories) no other agent hands off to.
// Returns not_found, forbidden, or conflict while handoffs point at it.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	actx, rec := audit.Stage(ctx, s.clock.Now(), "agent.delete", audit.Object{Kind: "agent", ID: id})
	return s.store.InAgentTx(actx, func(tx ports.AgentTx) error {
		a, err := tx.FindAgent(ctx, id)
		if err != nil {
			return err
		}
		rec.ObjectName = a.Name
		if err := a.CheckDelete(p, what); err != nil {
			return err
		}
		from, err := tx.AgentsHandingOffTo(ctx, id)
		if err != nil {
			return err
		}
		if n := countOthers(from, id); n > 0 {
			return errs.E(errs.Conflict, "%d agent(s) hand off to this one; remove it from their handoffs first", n)
		}
		if ws, err := tx.WorkflowsUsingAgent(ctx, id); err != nil {
			return err
		} else if len(ws) > 0 {
			return errs.E(errs.Conflict, "%d workflow(s) run this agent in a step (%q first); change those steps first", len(ws), ws[0].Name)
		}
		return tx.DeleteAgent(ctx, id)
	})
}

func countOthers(list []domain.Agent, self string) int {
	n := 0
	for _, a := range list {
		if a.ID != self {
			n++
		}
	}
	return n
}

// SetScope publishes (admin) or unpublishes (admin or author) an agent. A
// published agent may lean only on global rows, so its own references must
// already be global; unpublishing is refused while a shared or another
// person's agent hands off to it. Returns not_found, forbidden, conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (domain.Agent, error) {
	var out domain.Agent
	actx, rec := audit.Stage(ctx, s.clock.Now(), audit.ScopeAction("agent", to), audit.Object{Kind: "agent", ID: id}, "scope")
	err := s.store.InAgentTx(actx, func(tx ports.AgentTx) error {
		a, err := tx.FindAgent(ctx, id)
		if err != nil {
			return err
		}
		rec.ObjectName = a.Name
		if err := a.CheckScopeChange(p, to, what); err != nil {
			return err
		}
		moved := a
		moved.Scope = to
		if err := s.validate(ctx, tx, moved); err != nil {
			if errs.FieldsOf(err) != nil {
				return errs.Wrap(errs.Conflict, err, "as a %s agent it would break a reference: %s", to, errs.MessageOf(err))
			}
			return err
		}
		from, err := tx.AgentsHandingOffTo(ctx, id)
		if err != nil {
			return err
		}
		for _, h := range from {
			if h.ID != id && !domain.ReferenceSurvives(h.Ownership, a.Ownership, to) {
				return errs.E(errs.Conflict, "a shared or another person's agent hands off to this one; it must stay %s", a.Scope)
			}
		}
		ws, err := tx.WorkflowsUsingAgent(ctx, id)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if !domain.ReferenceSurvives(w.Ownership, a.Ownership, to) {
				return errs.E(errs.Conflict, "the workflow %q (shared, or another person's) runs this agent; it must stay %s", w.Name, a.Scope)
			}
		}
		moved.UpdatedAt = s.clock.Now()
		out = moved
		return tx.UpdateAgent(ctx, moved)
	})
	return out, err
}

// Tools returns the tool surface the agent would be given on a chat run
// (schemas only): the checklist, its selected built-ins, the task verbs
// (unless behavior.subagents is off) and one transfer tool per handoff
// target.
func (s *Service) Tools(ctx context.Context, p domain.Principal, id string) ([]tools.Spec, error) {
	a, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out := []tools.Spec{tools.TodoWrite}
	for _, name := range a.Tools {
		if spec, ok := tools.Lookup(name); ok {
			out = append(out, spec)
		} else if n, ok := s.natives.Lookup(name); ok {
			out = append(out, n.Spec)
		}
	}
	if a.Behavior.Subagents == nil || *a.Behavior.Subagents {
		out = append(out, tools.Tasks...)
	}
	if a.Behavior.WorkflowAuthoring {
		out = append(out, tools.GetWorkflow, tools.SaveWorkflow)
	}
	if s.mcp != nil {
		// The live MCP tools: a server that is not connected offers none.
		live, _, err := s.mcp.Resolve(ctx, a.Ownership, p.User.ID, a.Tools)
		if err != nil {
			return nil, err
		}
		for _, t := range live {
			out = append(out, t.Spec())
		}
	}
	for _, target := range a.Handoffs {
		t, err := s.store.FindAgent(ctx, target)
		if errs.Is(err, errs.NotFound) || (err == nil && !a.MayReference(t.Ownership)) {
			continue // a target that went away is the run's error, not this listing's
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tools.Handoff(domain.HandoffToolName(t.Name), t.Name, t.Behavior.HandoffDescription))
	}
	return out, nil
}

// normalize fills the lists a client may omit, so stored rows and responses
// always carry arrays (skills keeps its null: it means "every skill").
func normalize(s domain.AgentSpec) domain.AgentSpec {
	for _, l := range []*[]string{&s.Tools, &s.Handoffs, &s.Guardrails.Guardrails, &s.Approval.ApproveTools} {
		if *l == nil {
			*l = []string{}
		}
	}
	if s.Resilience.FallbackModels == nil {
		s.Resilience.FallbackModels = []domain.FallbackModel{}
	}
	if raw := bytes.TrimSpace(s.Guardrails.OutputSchema); bytes.Equal(raw, []byte("null")) {
		s.Guardrails.OutputSchema = nil
	}
	return s
}

// validate runs the spec's own rules, then every reference it makes, inside
// the transaction that will write it. Returns validation naming every field.
func (s *Service) validate(ctx context.Context, tx ports.AgentTx, a domain.Agent) error {
	var f errs.FieldErrors
	if err := f.Merge("", a.Validate()); err != nil {
		return err
	}
	if a.ProviderID != "" {
		pr, err := s.provider(ctx, tx, a.Ownership, a.ProviderID)
		if err != nil {
			if e := f.Merge("", fieldErr("provider_id", err)); e != nil {
				return e
			}
		} else if ti, ok := s.types(pr.Type); ok {
			for _, use := range providers.AgentFeatures(a.AgentSpec) {
				if !ti.Supports(pr.API, use.Feature) {
					f.Add(use.Field, "is not supported by the provider's %s (%s) API", pr.Type, pr.API)
				}
			}
		}
	}
	for i, fb := range a.Resilience.FallbackModels {
		if fb.ProviderID == "" {
			continue
		}
		if _, err := s.provider(ctx, tx, a.Ownership, fb.ProviderID); err != nil {
			if e := f.Merge("", fieldErr(fmt.Sprintf("resilience.fallback_models[%d].provider_id", i), err)); e != nil {
				return e
			}
		}
	}
	for i, name := range a.Guardrails.Guardrails {
		if _, err := tx.FindGuardrailByName(ctx, name); errs.Is(err, errs.NotFound) {
			f.Add(fmt.Sprintf("guardrails.guardrails[%d]", i), "no guardrail is named %q", name)
		} else if err != nil {
			return err
		}
	}
	for i, id := range a.Handoffs {
		field := fmt.Sprintf("handoffs[%d]", i)
		if id == a.ID {
			f.Add(field, "an agent cannot hand off to itself")
			continue
		}
		t, err := tx.FindAgent(ctx, id)
		switch {
		case errs.Is(err, errs.NotFound), err == nil && !t.VisibleTo(domain.Principal{User: domain.User{ID: a.OwnerID}}):
			f.Add(field, "no such agent")
		case err != nil:
			return err
		case !a.MayReference(t.Ownership):
			f.Add(field, "a global agent can hand off only to global agents")
		}
	}
	if a.Skills != nil {
		for i, id := range a.Skills {
			ok, err := s.skills(ctx, a.Ownership, id)
			if err != nil {
				return err
			}
			if !ok {
				f.Add(fmt.Sprintf("skills[%d]", i), "no such skill")
			}
		}
	}
	for i, name := range a.Tools {
		if _, ok := tools.Lookup(name); ok {
			continue
		}
		if _, ok := s.natives.Lookup(name); ok {
			continue
		}
		field := fmt.Sprintf("tools[%d]", i)
		if _, _, isMCP := domain.SplitMCPToolName(name); !isMCP || s.mcp == nil {
			f.Add(field, "%q is not a built-in tool", name)
			continue
		}
		if err := s.mcp.CheckSelectable(ctx, a.Ownership, name); errs.Is(err, errs.Validation) {
			f.Add(field, "%s", errs.MessageOf(err))
		} else if err != nil {
			return err
		}
	}
	validateOutputs(&f, a.AgentSpec)
	return f.Err()
}

// provider resolves a provider reference as the holder would see it: another
// owner's private provider does not exist; the holder's own private one is
// refused for a global agent.
func (s *Service) provider(ctx context.Context, tx ports.AgentTx, holder domain.Ownership, id string) (domain.Provider, error) {
	pr, err := tx.FindProvider(ctx, id)
	if errs.Is(err, errs.NotFound) || (err == nil && pr.Scope == domain.ScopePrivate && pr.OwnerID != holder.OwnerID) {
		return pr, errs.E(errs.Validation, "no such provider")
	}
	if err != nil {
		return pr, err
	}
	if !holder.MayReference(pr.Ownership) {
		return pr, errs.E(errs.Validation, "a global agent can use only global providers")
	}
	return pr, nil
}

// fieldErr pins a validation error on a field; other errors pass through.
func fieldErr(field string, err error) error {
	if errs.CodeOf(err) == errs.Validation {
		return errs.Field(field, "%s", errs.MessageOf(err))
	}
	return err
}

// validateOutputs checks the output schema and that every error handler's
// final output is what the agent could have produced: a string for a plain
// agent, a value matching output_schema otherwise.
func validateOutputs(f *errs.FieldErrors, s domain.AgentSpec) {
	check := func(v json.RawMessage) error {
		var str string
		if json.Unmarshal(v, &str) != nil {
			return errors.New("must be a string: this agent has no output_schema")
		}
		return nil
	}
	if len(bytes.TrimSpace(s.Guardrails.OutputSchema)) > 0 {
		sch, err := compileSchema(s.Guardrails.OutputSchema)
		if err != nil {
			f.Add("guardrails.output_schema", "%v", err)
			return
		}
		check = func(v json.RawMessage) error { return validateValue(sch, v) }
	}
	handlers := s.ErrorHandlers.All()
	for _, key := range domain.ErrorHandlerKeys {
		if h, ok := handlers[key]; ok && len(bytes.TrimSpace(h.FinalOutput)) > 0 {
			if err := check(h.FinalOutput); err != nil {
				f.Add("error_handlers."+key+".final_output", "%v", err)
			}
		}
	}
}

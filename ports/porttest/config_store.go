package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ConfigStore is an in-memory ports.ConfigStore. A transaction works on a
// copy of the rows that replaces them only when it commits, one
// transaction at a time; reads outside one see the last commit. Names
// compare case-insensitively and times are kept to the millisecond, as the
// real store's are. The zero value is empty and ready (no built-in
// guardrails: a test adds what it needs).
type ConfigStore struct {
	write sync.Mutex // one transaction at a time
	mu    sync.Mutex // guards rows
	rows  *configRows

	agentReads atomic.Int64 // FindAgent calls outside a transaction
}

// configRows is one state of the configuration. A committed state is never
// changed again: a transaction changes its own copy.
type configRows struct {
	providers  map[string]domain.Provider
	agents     map[string]domain.Agent
	guardrails map[string]domain.Guardrail
	memories   map[string]domain.Memory
	workflows  map[string]domain.Workflow
	skills     map[string]domain.Skill
}

func (r *configRows) clone() *configRows {
	if r == nil {
		return &configRows{providers: map[string]domain.Provider{}, agents: map[string]domain.Agent{},
			guardrails: map[string]domain.Guardrail{}, memories: map[string]domain.Memory{}, workflows: map[string]domain.Workflow{},
			skills: map[string]domain.Skill{}}
	}
	return &configRows{providers: maps.Clone(r.providers), agents: maps.Clone(r.agents),
		guardrails: maps.Clone(r.guardrails), memories: maps.Clone(r.memories), workflows: maps.Clone(r.workflows),
		skills: maps.Clone(r.skills)}
}

func (s *ConfigStore) committed() configTx {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows == nil {
		s.rows = s.rows.clone()
	}
	return configTx{s.rows}
}

// InConfigTx runs fn in one transaction, committed when fn returns nil and
// rolled back otherwise.
func (s *ConfigStore) InConfigTx(ctx context.Context, fn func(tx ports.ConfigTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	tx := configTx{s.committed().rows.clone()}
	if err := fn(tx); err != nil {
		return err
	}
	s.mu.Lock()
	s.rows = tx.rows
	s.mu.Unlock()
	return nil
}

// InProviderTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InProviderTx(ctx context.Context, fn func(tx ports.ProviderTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// InAgentTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InAgentTx(ctx context.Context, fn func(tx ports.AgentTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// InSkillTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InSkillTx(ctx context.Context, fn func(tx ports.SkillTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// InWorkflowTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InWorkflowTx(ctx context.Context, fn func(tx ports.WorkflowTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// InMemoryTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InMemoryTx(ctx context.Context, fn func(tx ports.MemoryTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// InGuardrailTx runs fn in one transaction, as InConfigTx does.
func (s *ConfigStore) InGuardrailTx(ctx context.Context, fn func(tx ports.GuardrailTx) error) error {
	return s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return fn(tx) })
}

// FindProvider returns not_found when absent.
func (s *ConfigStore) FindProvider(ctx context.Context, id string) (domain.Provider, error) {
	return s.committed().FindProvider(ctx, id)
}

// ListProviders returns every provider, newest first.
func (s *ConfigStore) ListProviders(ctx context.Context) ([]domain.Provider, error) {
	return s.committed().ListProviders(ctx)
}

// AgentReads is how many times FindAgent was asked (outside a
// transaction): a query each on a real store.
func (s *ConfigStore) AgentReads() int { return int(s.agentReads.Load()) }

// FindAgent returns not_found when absent.
func (s *ConfigStore) FindAgent(ctx context.Context, id string) (domain.Agent, error) {
	s.agentReads.Add(1)
	return s.committed().FindAgent(ctx, id)
}

// ListAgents returns every agent, newest first.
func (s *ConfigStore) ListAgents(ctx context.Context) ([]domain.Agent, error) {
	return s.committed().ListAgents(ctx)
}

// AgentsUsingProvider returns the agents naming the provider, as their
// provider or a fallback.
func (s *ConfigStore) AgentsUsingProvider(ctx context.Context, providerID string) ([]domain.Agent, error) {
	return s.committed().AgentsUsingProvider(ctx, providerID)
}

// AgentsUsingGuardrail returns the agents naming the guardrail.
func (s *ConfigStore) AgentsUsingGuardrail(ctx context.Context, name string) ([]domain.Agent, error) {
	return s.committed().AgentsUsingGuardrail(ctx, name)
}

// AgentsHandingOffTo returns the agents listing agentID in handoffs.
func (s *ConfigStore) AgentsHandingOffTo(ctx context.Context, agentID string) ([]domain.Agent, error) {
	return s.committed().AgentsHandingOffTo(ctx, agentID)
}

// FindGuardrail returns not_found when absent.
func (s *ConfigStore) FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error) {
	return s.committed().FindGuardrail(ctx, id)
}

// FindGuardrailByName matches case-insensitively; not_found when absent.
func (s *ConfigStore) FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error) {
	return s.committed().FindGuardrailByName(ctx, name)
}

// ListGuardrails returns every guardrail, built-ins first, then by name.
func (s *ConfigStore) ListGuardrails(ctx context.Context) ([]domain.Guardrail, error) {
	return s.committed().ListGuardrails(ctx)
}

// FindMemory returns not_found when absent.
func (s *ConfigStore) FindMemory(ctx context.Context, id string) (domain.Memory, error) {
	return s.committed().FindMemory(ctx, id)
}

// ListMemories returns every memory, global ones first, then by key.
func (s *ConfigStore) ListMemories(ctx context.Context) ([]domain.Memory, error) {
	return s.committed().ListMemories(ctx)
}

// CountMemories counts the memories of a scope ("" = global).
func (s *ConfigStore) CountMemories(ctx context.Context, agentID string) (int, error) {
	return s.committed().CountMemories(ctx, agentID)
}

// FindSkill returns not_found when absent.
func (s *ConfigStore) FindSkill(ctx context.Context, id string) (domain.Skill, error) {
	return s.committed().FindSkill(ctx, id)
}

// ListSkills returns every skill, newest first.
func (s *ConfigStore) ListSkills(ctx context.Context) ([]domain.Skill, error) {
	return s.committed().ListSkills(ctx)
}

// FindWorkflow returns not_found when absent.
func (s *ConfigStore) FindWorkflow(ctx context.Context, id string) (domain.Workflow, error) {
	return s.committed().FindWorkflow(ctx, id)
}

// ListWorkflows returns every workflow, newest first.
func (s *ConfigStore) ListWorkflows(ctx context.Context) ([]domain.Workflow, error) {
	return s.committed().ListWorkflows(ctx)
}

// WorkflowsUsingAgent returns the workflows with a step the agent runs.
func (s *ConfigStore) WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error) {
	return s.committed().WorkflowsUsingAgent(ctx, agentID)
}

// configTx reads and writes one state of the rows: a committed one (read
// only) or a transaction's copy. Its methods keep the ports.ConfigTx
// promises documented there.
type configTx struct{ rows *configRows }

// FindProvider implements ports.ConfigReader.
func (c configTx) FindProvider(ctx context.Context, id string) (domain.Provider, error) {
	p, ok := c.rows.providers[id]
	return p, found(ctx, ok, "provider")
}

// ListProviders implements ports.ConfigReader.
func (c configTx) ListProviders(ctx context.Context) ([]domain.Provider, error) {
	return newestFirst(ctx, c.rows.providers, func(p domain.Provider) bool { return true })
}

// FindAgent implements ports.ConfigReader.
func (c configTx) FindAgent(ctx context.Context, id string) (domain.Agent, error) {
	a, ok := c.rows.agents[id]
	return copyAgent(a), found(ctx, ok, "agent")
}

// ListAgents implements ports.ConfigReader.
func (c configTx) ListAgents(ctx context.Context) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, true, func(domain.Agent) bool { return true })
}

// AgentsUsingProvider implements ports.ConfigReader.
func (c configTx) AgentsUsingProvider(ctx context.Context, providerID string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, false, func(a domain.Agent) bool {
		return a.ProviderID == providerID ||
			slices.ContainsFunc(a.Resilience.FallbackModels, func(f domain.FallbackModel) bool { return f.ProviderID == providerID })
	})
}

// AgentsUsingGuardrail implements ports.ConfigReader.
func (c configTx) AgentsUsingGuardrail(ctx context.Context, name string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, false, func(a domain.Agent) bool {
		return slices.ContainsFunc(a.Guardrails.Guardrails, func(g string) bool { return strings.EqualFold(g, name) })
	})
}

// AgentsHandingOffTo implements ports.ConfigReader.
func (c configTx) AgentsHandingOffTo(ctx context.Context, agentID string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, false, func(a domain.Agent) bool { return slices.Contains(a.Handoffs, agentID) })
}

// agentsWhere lists the agents keep accepts, by id (newest first when
// newest).
func (c configTx) agentsWhere(ctx context.Context, newest bool, keep func(domain.Agent) bool) ([]domain.Agent, error) {
	out, err := newestFirst(ctx, c.rows.agents, keep)
	if !newest {
		slices.Reverse(out)
	}
	for i := range out {
		out[i] = copyAgent(out[i])
	}
	return out, err
}

// FindGuardrail implements ports.ConfigReader.
func (c configTx) FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error) {
	g, ok := c.rows.guardrails[id]
	g.Stages = slices.Clone(g.Stages)
	return g, found(ctx, ok, "guardrail")
}

// FindGuardrailByName implements ports.ConfigReader.
func (c configTx) FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error) {
	for _, g := range c.rows.guardrails {
		if sameName(g.Name, name) {
			g.Stages = slices.Clone(g.Stages)
			return g, ctx.Err()
		}
	}
	return domain.Guardrail{}, found(ctx, false, "guardrail")
}

// ListGuardrails implements ports.ConfigReader.
func (c configTx) ListGuardrails(ctx context.Context) ([]domain.Guardrail, error) {
	out := make([]domain.Guardrail, 0, len(c.rows.guardrails))
	for _, g := range c.rows.guardrails {
		g.Stages = slices.Clone(g.Stages)
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b domain.Guardrail) int {
		if a.Builtin != b.Builtin {
			if a.Builtin {
				return -1
			}
			return 1
		}
		return cmp.Compare(asciiLower(a.Name), asciiLower(b.Name))
	})
	return out, ctx.Err()
}

// FindMemory implements ports.ConfigReader.
func (c configTx) FindMemory(ctx context.Context, id string) (domain.Memory, error) {
	m, ok := c.rows.memories[id]
	return m, found(ctx, ok, "memory")
}

// ListMemories implements ports.ConfigReader.
func (c configTx) ListMemories(ctx context.Context) ([]domain.Memory, error) {
	out := slices.Collect(maps.Values(c.rows.memories))
	slices.SortFunc(out, func(a, b domain.Memory) int {
		if (a.AgentID == "") != (b.AgentID == "") {
			if a.AgentID == "" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.AgentID, b.AgentID), cmp.Compare(asciiLower(a.Key), asciiLower(b.Key)))
	})
	return out, ctx.Err()
}

// CountMemories implements ports.ConfigReader.
func (c configTx) CountMemories(ctx context.Context, agentID string) (int, error) {
	n := 0
	for _, m := range c.rows.memories {
		if m.AgentID == agentID {
			n++
		}
	}
	return n, ctx.Err()
}

// InsertProvider implements ports.ConfigWriter.
func (c configTx) InsertProvider(ctx context.Context, p domain.Provider) error {
	if err := c.checkProvider(ctx, p, true); err != nil {
		return err
	}
	// The sign-in is written only by ChatGPTStore.SwapChatGPTToken.
	p.SealedChatGPTToken, p.CreatedAt, p.UpdatedAt = "", storedTime(p.CreatedAt), storedTime(p.UpdatedAt)
	c.rows.providers[p.ID] = p
	return nil
}

// UpdateProvider implements ports.ConfigWriter.
func (c configTx) UpdateProvider(ctx context.Context, p domain.Provider) error {
	if err := c.checkProvider(ctx, p, false); err != nil {
		return err
	}
	cur := c.rows.providers[p.ID]
	p.OwnerID, p.CreatedAt, p.UpdatedAt = cur.OwnerID, cur.CreatedAt, storedTime(p.UpdatedAt) // the owner never changes
	// The sign-in is written only by ChatGPTStore.SwapChatGPTToken, but a
	// provider that stops signing in with ChatGPT loses it.
	p.SealedChatGPTToken = ""
	if p.AuthMode == domain.AuthChatGPTLogin {
		p.SealedChatGPTToken = cur.SealedChatGPTToken
	}
	c.rows.providers[p.ID] = p
	return nil
}

func (c configTx) checkProvider(ctx context.Context, p domain.Provider, insert bool) error {
	if err := rowFor(ctx, c.rows.providers, p.ID, insert, "provider"); err != nil {
		return err
	}
	if !insert {
		p.OwnerID = c.rows.providers[p.ID].OwnerID
	}
	for id, o := range c.rows.providers {
		if id != p.ID && sameScopedName(o.Ownership, o.Name, p.Ownership, p.Name) {
			return errs.E(errs.Conflict, "a provider named %q already exists in that scope", p.Name)
		}
	}
	return nil
}

// DeleteProvider implements ports.ConfigWriter.
func (c configTx) DeleteProvider(ctx context.Context, id string) error {
	return deleteRow(ctx, c.rows.providers, id, "provider")
}

// InsertAgent implements ports.ConfigWriter.
func (c configTx) InsertAgent(ctx context.Context, a domain.Agent) error {
	if err := c.checkAgent(ctx, a, true); err != nil {
		return err
	}
	a.CreatedAt, a.UpdatedAt = storedTime(a.CreatedAt), storedTime(a.UpdatedAt)
	c.rows.agents[a.ID] = copyAgent(a)
	return nil
}

// UpdateAgent implements ports.ConfigWriter.
func (c configTx) UpdateAgent(ctx context.Context, a domain.Agent) error {
	if err := c.checkAgent(ctx, a, false); err != nil {
		return err
	}
	cur := c.rows.agents[a.ID]
	a.OwnerID, a.CreatedAt, a.UpdatedAt = cur.OwnerID, cur.CreatedAt, storedTime(a.UpdatedAt) // owner and creation time stay
	c.rows.agents[a.ID] = copyAgent(a)
	return nil
}

func (c configTx) checkAgent(ctx context.Context, a domain.Agent, insert bool) error {
	if err := rowFor(ctx, c.rows.agents, a.ID, insert, "agent"); err != nil {
		return err
	}
	if !insert {
		a.OwnerID = c.rows.agents[a.ID].OwnerID
	}
	for id, o := range c.rows.agents {
		if id != a.ID && sameScopedName(o.Ownership, o.Name, a.Ownership, a.Name) {
			return errs.E(errs.Conflict, "an agent named %q already exists in that scope", a.Name)
		}
	}
	return nil
}

// DeleteAgent implements ports.ConfigWriter: the agent goes with its
// memories.
func (c configTx) DeleteAgent(ctx context.Context, id string) error {
	if err := deleteRow(ctx, c.rows.agents, id, "agent"); err != nil {
		return err
	}
	maps.DeleteFunc(c.rows.memories, func(_ string, m domain.Memory) bool { return m.AgentID == id })
	return nil
}

// InsertGuardrail implements ports.ConfigWriter.
func (c configTx) InsertGuardrail(ctx context.Context, g domain.Guardrail) error {
	if err := c.checkGuardrail(ctx, g, true); err != nil {
		return err
	}
	g.Stages, g.CreatedAt, g.UpdatedAt = slices.Clone(g.Stages), storedTime(g.CreatedAt), storedTime(g.UpdatedAt)
	c.rows.guardrails[g.ID] = g
	return nil
}

// UpdateGuardrail implements ports.ConfigWriter.
func (c configTx) UpdateGuardrail(ctx context.Context, g domain.Guardrail) error {
	if err := c.checkGuardrail(ctx, g, false); err != nil {
		return err
	}
	cur := c.rows.guardrails[g.ID]
	g.Builtin, g.CreatedAt, g.UpdatedAt, g.Stages = cur.Builtin, cur.CreatedAt, storedTime(g.UpdatedAt), slices.Clone(g.Stages) // builtin never changes
	c.rows.guardrails[g.ID] = g
	return nil
}

func (c configTx) checkGuardrail(ctx context.Context, g domain.Guardrail, insert bool) error {
	if err := rowFor(ctx, c.rows.guardrails, g.ID, insert, "guardrail"); err != nil {
		return err
	}
	for id, o := range c.rows.guardrails {
		if id != g.ID && sameName(o.Name, g.Name) {
			return errs.E(errs.Conflict, "a guardrail named %q already exists", g.Name)
		}
	}
	return nil
}

// DeleteGuardrail implements ports.ConfigWriter.
func (c configTx) DeleteGuardrail(ctx context.Context, id string) error {
	return deleteRow(ctx, c.rows.guardrails, id, "guardrail")
}

// InsertMemory implements ports.ConfigWriter.
func (c configTx) InsertMemory(ctx context.Context, m domain.Memory) error {
	if err := c.checkMemory(ctx, m, true); err != nil {
		return err
	}
	if _, ok := c.rows.agents[m.AgentID]; m.AgentID != "" && !ok {
		return errs.E(errs.Conflict, "the memory's agent %s does not exist", m.AgentID)
	}
	m.CreatedAt, m.UpdatedAt = storedTime(m.CreatedAt), storedTime(m.UpdatedAt)
	c.rows.memories[m.ID] = m
	return nil
}

// UpdateMemory implements ports.ConfigWriter.
func (c configTx) UpdateMemory(ctx context.Context, m domain.Memory) error {
	if err := rowFor(ctx, c.rows.memories, m.ID, false, "memory"); err != nil {
		return err
	}
	cur := c.rows.memories[m.ID]
	m.AgentID, m.CreatedAt, m.UpdatedAt = cur.AgentID, cur.CreatedAt, storedTime(m.UpdatedAt) // the scope never changes
	if err := c.checkMemory(ctx, m, false); err != nil {
		return err
	}
	c.rows.memories[m.ID] = m
	return nil
}

func (c configTx) checkMemory(ctx context.Context, m domain.Memory, insert bool) error {
	if err := rowFor(ctx, c.rows.memories, m.ID, insert, "memory"); err != nil {
		return err
	}
	for id, o := range c.rows.memories {
		if id != m.ID && o.AgentID == m.AgentID && sameName(o.Key, m.Key) {
			return errs.E(errs.Conflict, "a memory with the key %q already exists in that scope", m.Key)
		}
	}
	return nil
}

// DeleteMemory implements ports.ConfigWriter.
func (c configTx) DeleteMemory(ctx context.Context, id string) error {
	return deleteRow(ctx, c.rows.memories, id, "memory")
}

// sameScopedName reports whether two rows' names clash: both global, or
// both private to one owner, with names equal but for ASCII case.
func sameScopedName(a domain.Ownership, aName string, b domain.Ownership, bName string) bool {
	if a.Scope != b.Scope || (a.Scope == domain.ScopePrivate && a.OwnerID != b.OwnerID) {
		return false
	}
	return sameName(aName, bName)
}

// copyAgent is a deep copy, by the JSON the real store keeps an agent's
// knobs in — so a caller changing a returned agent's slices changes nothing
// stored.
func copyAgent(a domain.Agent) domain.Agent {
	b, err := json.Marshal(a.AgentSpec)
	if err != nil {
		panic("porttest: encode agent: " + err.Error())
	}
	a.AgentSpec = domain.AgentSpec{}
	if err := json.Unmarshal(b, &a.AgentSpec); err != nil {
		panic("porttest: decode agent: " + err.Error())
	}
	return a
}

// found is ctx's error, or not_found naming what when ok is false.
func found(ctx context.Context, ok bool, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.NotFound, "%s not found", what)
	}
	return nil
}

// rowFor checks a write's target: a new id for an insert (conflict
// otherwise), an existing row for an update (not_found otherwise).
func rowFor[T any](ctx context.Context, rows map[string]T, id string, insert bool, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, exists := rows[id]
	switch {
	case insert && exists:
		return errs.E(errs.Conflict, "%s %s already exists", what, id)
	case !insert && !exists:
		return errs.E(errs.NotFound, "%s not found", what)
	}
	return nil
}

func deleteRow[T any](ctx context.Context, rows map[string]T, id, what string) error {
	if err := rowFor(ctx, rows, id, false, what); err != nil {
		return err
	}
	delete(rows, id)
	return nil
}

// newestFirst lists the rows keep accepts by id, newest (largest) first.
func newestFirst[T any](ctx context.Context, rows map[string]T, keep func(T) bool) ([]T, error) {
	ids := slices.Sorted(maps.Keys(rows))
	slices.Reverse(ids)
	out := []T{}
	for _, id := range ids {
		if keep(rows[id]) {
			out = append(out, rows[id])
		}
	}
	return out, ctx.Err()
}

var _ ports.ConfigStore = (*ConfigStore)(nil)

// copyWorkflow copies a workflow's steps, so no caller shares a row's.
func copyWorkflow(w domain.Workflow) domain.Workflow {
	w.Steps = slices.Clone(w.Steps)
	return w
}

// FindWorkflow implements ports.ConfigReader.
func (c configTx) FindWorkflow(ctx context.Context, id string) (domain.Workflow, error) {
	w, ok := c.rows.workflows[id]
	return copyWorkflow(w), found(ctx, ok, "workflow")
}

// ListWorkflows implements ports.ConfigReader.
func (c configTx) ListWorkflows(ctx context.Context) ([]domain.Workflow, error) {
	return c.workflowsWhere(ctx, func(domain.Workflow) bool { return true })
}

// WorkflowsUsingAgent implements ports.ConfigReader.
func (c configTx) WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error) {
	return c.workflowsWhere(ctx, func(w domain.Workflow) bool {
		return slices.ContainsFunc(w.Steps, func(s domain.WorkflowStep) bool { return s.Agent == agentID })
	})
}

func (c configTx) workflowsWhere(ctx context.Context, keep func(domain.Workflow) bool) ([]domain.Workflow, error) {
	out, err := newestFirst(ctx, c.rows.workflows, keep)
	for i := range out {
		out[i] = copyWorkflow(out[i])
	}
	return out, err
}

// InsertWorkflow implements ports.ConfigWriter.
func (c configTx) InsertWorkflow(ctx context.Context, w domain.Workflow) error {
	if err := c.checkWorkflow(ctx, w, true); err != nil {
		return err
	}
	w.CreatedAt, w.UpdatedAt = storedTime(w.CreatedAt), storedTime(w.UpdatedAt)
	c.rows.workflows[w.ID] = copyWorkflow(w)
	return nil
}

// UpdateWorkflow implements ports.ConfigWriter.
func (c configTx) UpdateWorkflow(ctx context.Context, w domain.Workflow) error {
	if err := c.checkWorkflow(ctx, w, false); err != nil {
		return err
	}
	cur := c.rows.workflows[w.ID]
	w.OwnerID, w.CreatedAt, w.UpdatedAt = cur.OwnerID, cur.CreatedAt, storedTime(w.UpdatedAt) // owner and creation time stay
	c.rows.workflows[w.ID] = copyWorkflow(w)
	return nil
}

func (c configTx) checkWorkflow(ctx context.Context, w domain.Workflow, insert bool) error {
	if err := rowFor(ctx, c.rows.workflows, w.ID, insert, "workflow"); err != nil {
		return err
	}
	if !insert {
		w.OwnerID = c.rows.workflows[w.ID].OwnerID
	}
	for id, o := range c.rows.workflows {
		if id != w.ID && sameScopedName(o.Ownership, o.Name, w.Ownership, w.Name) {
			return errs.E(errs.Conflict, "a workflow named %q already exists in that scope", w.Name)
		}
	}
	return nil
}

// DeleteWorkflow implements ports.ConfigWriter.
func (c configTx) DeleteWorkflow(ctx context.Context, id string) error {
	return deleteRow(ctx, c.rows.workflows, id, "workflow")
}

// FindSkill implements ports.ConfigReader.
func (c configTx) FindSkill(ctx context.Context, id string) (domain.Skill, error) {
	s, ok := c.rows.skills[id]
	return s, found(ctx, ok, "skill")
}

// ListSkills implements ports.ConfigReader.
func (c configTx) ListSkills(ctx context.Context) ([]domain.Skill, error) {
	return newestFirst(ctx, c.rows.skills, func(domain.Skill) bool { return true })
}

// InsertSkill implements ports.ConfigWriter.
func (c configTx) InsertSkill(ctx context.Context, s domain.Skill) error {
	if err := c.checkSkill(ctx, s, true); err != nil {
		return err
	}
	s.CreatedAt, s.UpdatedAt = storedTime(s.CreatedAt), storedTime(s.UpdatedAt)
	c.rows.skills[s.ID] = s
	return nil
}

// UpdateSkill implements ports.ConfigWriter. Owner and creation time stay.
func (c configTx) UpdateSkill(ctx context.Context, s domain.Skill) error {
	if err := c.checkSkill(ctx, s, false); err != nil {
		return err
	}
	cur := c.rows.skills[s.ID]
	s.OwnerID, s.CreatedAt, s.UpdatedAt = cur.OwnerID, cur.CreatedAt, storedTime(s.UpdatedAt)
	c.rows.skills[s.ID] = s
	return nil
}

func (c configTx) checkSkill(ctx context.Context, s domain.Skill, insert bool) error {
	if err := rowFor(ctx, c.rows.skills, s.ID, insert, "skill"); err != nil {
		return err
	}
	if !insert {
		s.OwnerID = c.rows.skills[s.ID].OwnerID
	}
	for id, o := range c.rows.skills {
		if id != s.ID && sameName(o.RepoLabel, s.RepoLabel) && sameScopedName(o.Ownership, o.Name, s.Ownership, s.Name) {
			return errs.E(errs.Conflict, "a skill named %q already exists in that scope", s.ModelName())
		}
	}
	return nil
}

// DeleteSkill implements ports.ConfigWriter.
func (c configTx) DeleteSkill(ctx context.Context, id string) error {
	return deleteRow(ctx, c.rows.skills, id, "skill")
}

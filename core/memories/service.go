// Package memories manages the notes the runner places in agents'
// instructions: global memories (host configuration, written by admins) and
// an agent's own (read and written with the agent's permissions).
package memories

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
)

// Service manages memories.
type Service struct {
	store ports.MemoryStore
	rows  scoped.Rows[domain.Memory, ports.MemoryTx]
	ids   ports.IDs
	clock ports.Clock
}

// New returns a Service.
func New(store ports.MemoryStore, ids ports.IDs, clock ports.Clock) *Service {
	rows := scoped.Rows[domain.Memory, ports.MemoryTx]{InTx: store.InMemoryTx, Find: ports.MemoryTx.FindMemory,
		Insert: ports.MemoryTx.InsertMemory, Update: ports.MemoryTx.UpdateMemory, Delete: ports.MemoryTx.DeleteMemory}
	return &Service{store: store, rows: rows, ids: ids, clock: clock}
}

// List returns the global memories and those of agents the caller can see;
// with agentID, only that agent's (not_found if it is not visible).
func (s *Service) List(ctx context.Context, p domain.Principal, agentID string) ([]domain.Memory, error) {
	if agentID != "" {
		a, err := s.store.FindAgent(ctx, agentID)
		if err != nil {
			return nil, err
		}
		if err := a.CheckRead(p, "agent"); err != nil {
			return nil, err
		}
	}
	all, err := s.store.ListMemories(ctx)
	if err != nil {
		return nil, err
	}
	visible := map[string]bool{}
	out := []domain.Memory{}
	for _, m := range all {
		if agentID != "" && m.AgentID != agentID {
			continue
		}
		if m.AgentID != "" {
			seen, ok := visible[m.AgentID]
			if !ok {
				a, err := s.store.FindAgent(ctx, m.AgentID)
				if err != nil && !errs.Is(err, errs.NotFound) {
					return nil, err
				}
				seen = err == nil && a.VisibleTo(p)
				visible[m.AgentID] = seen
			}
			if !seen {
				continue
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// Get returns one memory; one of an agent the caller cannot see is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Memory, error) {
	return scoped.Read(ctx, id, s.store.FindMemory, func(m domain.Memory) error {
		if m.AgentID == "" {
			return nil
		}
		if a, err := s.store.FindAgent(ctx, m.AgentID); err != nil || !a.VisibleTo(p) {
			return errs.E(errs.NotFound, "memory not found")
		}
		return nil
	})
}

// mayWrite checks the caller may write memories of the scope: admins for
// global ones, the agent's writers for an agent's. inBody says the agent id
// came from the request body, where an unknown agent is a 400.
func mayWrite(ctx context.Context, tx ports.AgentReader, p domain.Principal, agentID string, inBody bool) error {
	if agentID == "" {
		if !p.IsAdmin() {
			return errs.E(errs.Forbidden, "global memories are host configuration: only an admin can write them")
		}
		return nil
	}
	a, err := tx.FindAgent(ctx, agentID)
	if err == nil && !a.VisibleTo(p) {
		err = errs.E(errs.NotFound, "agent not found")
	}
	if errs.Is(err, errs.NotFound) && inBody {
		return errs.Field("agent_config_id", "no such agent")
	}
	if err != nil {
		return err
	}
	return a.CheckUpdate(p, "agent")
}

// Create adds a memory. Returns validation, forbidden, or conflict when the
// key is taken in its scope or the scope holds its maximum.
func (s *Service) Create(ctx context.Context, p domain.Principal, m domain.Memory) (domain.Memory, error) {
	if err := m.Validate(); err != nil {
		return domain.Memory{}, err
	}
	now := s.clock.Now()
	m.ID, m.CreatedAt, m.UpdatedAt = s.ids.NewID(), now, now
	return s.rows.Add(ctx, m, func(tx ports.MemoryTx, m domain.Memory) (domain.Memory, error) {
		if err := mayWrite(ctx, tx, p, m.AgentID, true); err != nil {
			return m, err
		}
		n, err := tx.CountMemories(ctx, m.AgentID)
		if err != nil {
			return m, err
		}
		if n >= domain.MaxMemoriesPerScope {
			return m, errs.E(errs.Conflict, "this scope already holds %d memories, the most it keeps", domain.MaxMemoriesPerScope)
		}
		return m, nil
	})
}

// Update replaces a memory's key and content; its scope is fixed. Returns
// not_found, forbidden, validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in domain.Memory) (domain.Memory, error) {
	if err := in.Validate(); err != nil {
		return domain.Memory{}, err
	}
	return s.rows.Change(ctx, id, func(tx ports.MemoryTx, m domain.Memory) (domain.Memory, bool, error) {
		if err := mayWrite(ctx, tx, p, m.AgentID, false); err != nil {
			return m, false, hideForeign(err)
		}
		if in.AgentID != m.AgentID {
			return m, false, errs.Field("agent_config_id", "a memory cannot move to another scope; create a new one")
		}
		m.Key, m.Content, m.UpdatedAt = in.Key, in.Content, s.clock.Now()
		return m, true, nil
	})
}

// Delete removes a memory. Returns not_found or forbidden.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	return s.rows.Remove(ctx, id, func(tx ports.MemoryTx, m domain.Memory) error {
		return hideForeign(mayWrite(ctx, tx, p, m.AgentID, false))
	})
}

// hideForeign reports a memory of an invisible agent as a missing memory.
func hideForeign(err error) error {
	if errs.Is(err, errs.NotFound) {
		return errs.E(errs.NotFound, "memory not found")
	}
	return err
}

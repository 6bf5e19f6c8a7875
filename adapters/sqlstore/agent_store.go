package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const agentColumns = `id, owner_id, scope, name, avatar, description, instructions, model, provider_id, context_window,
	behavior, resilience, guardrails, session, approval, compaction, model_settings, tools, skills, handoffs, error_handlers,
	created_at, updated_at`

// agentJSON pairs each JSON column with its field, in column order.
func agentJSON(a *domain.Agent) []any {
	return []any{&a.Behavior, &a.Resilience, &a.Guardrails, &a.Session, &a.Approval, &a.Compaction,
		&a.ModelSettings, &a.Tools, &a.Skills, &a.Handoffs, &a.ErrorHandlers}
}

func scanAgent(r rowScanner) (domain.Agent, error) {
	var a domain.Agent
	var scope string
	var created, updated int64
	raw := make([]string, 11)
	dest := []any{&a.ID, &a.OwnerID, &scope, &a.Name, &a.Avatar, &a.Description, &a.Instructions, &a.Model, &a.ProviderID, &a.ContextWindow}
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	dest = append(dest, &created, &updated)
	if err := r.Scan(dest...); err != nil {
		return a, err
	}
	for i, field := range agentJSON(&a) {
		if err := json.Unmarshal([]byte(raw[i]), field); err != nil {
			return a, errs.Wrap(errs.Internal, err, "agent %s has a malformed JSON column", a.ID)
		}
	}
	a.Scope = domain.Scope(scope)
	a.CreatedAt, a.UpdatedAt = fromMS(created), fromMS(updated)
	return a, nil
}

func agentArgs(a domain.Agent) ([]any, error) {
	args := []any{a.ID, a.OwnerID, string(a.Scope), a.Name, a.Avatar, a.Description, a.Instructions, a.Model, a.ProviderID, a.ContextWindow}
	for _, field := range agentJSON(&a) {
		b, err := json.Marshal(field)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, err, "encode agent %s", a.ID)
		}
		args = append(args, string(b))
	}
	return append(args, ms(a.CreatedAt), ms(a.UpdatedAt)), nil
}

// FindAgent implements ports.AgentReader.
func (c configQ) FindAgent(ctx context.Context, id string) (domain.Agent, error) {
	a, err := scanAgent(c.q.QueryRowContext(ctx, `SELECT `+agentColumns+` FROM agents WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, notFound("agent")
	}
	return a, translate(err)
}

// ListAgents implements ports.AgentReader.
func (c configQ) ListAgents(ctx context.Context) ([]domain.Agent, error) {
	return collect(ctx, c.q, scanAgent, `SELECT `+agentColumns+` FROM agents ORDER BY id DESC`)
}

// The "which agents use X" reads decode every agent and look in Go: the
// references sit inside JSON columns, whose SQL differs per engine, and
// agents are few (they are configuration, not data).

// agentsWhere lists the agents for which keep holds, by id.
func (c configQ) agentsWhere(ctx context.Context, keep func(domain.Agent) bool) ([]domain.Agent, error) {
	all, err := collect(ctx, c.q, scanAgent, `SELECT `+agentColumns+` FROM agents ORDER BY id`)
	if err != nil {
		return nil, err
	}
	out := []domain.Agent{}
	for _, a := range all {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// AgentsUsingProvider implements ports.AgentReader.
func (c configQ) AgentsUsingProvider(ctx context.Context, providerID string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, func(a domain.Agent) bool {
		return a.ProviderID == providerID || slices.ContainsFunc(a.Resilience.FallbackModels,
			func(f domain.FallbackModel) bool { return f.ProviderID == providerID })
	})
}

// AgentsUsingGuardrail implements ports.AgentReader. Guardrail names
// compare without case, as their table does.
func (c configQ) AgentsUsingGuardrail(ctx context.Context, name string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, func(a domain.Agent) bool {
		return slices.ContainsFunc(a.Guardrails.Guardrails, func(g string) bool { return strings.EqualFold(g, name) })
	})
}

// AgentsHandingOffTo implements ports.AgentReader.
func (c configQ) AgentsHandingOffTo(ctx context.Context, agentID string) ([]domain.Agent, error) {
	return c.agentsWhere(ctx, func(a domain.Agent) bool { return slices.Contains(a.Handoffs, agentID) })
}

// InsertAgent implements ports.AgentWriter.
func (c configQ) InsertAgent(ctx context.Context, a domain.Agent) error {
	args, err := agentArgs(a)
	if err != nil {
		return err
	}
	marks := "?"
	for range len(args) - 1 {
		marks += ", ?"
	}
	_, err = c.q.ExecContext(ctx, fmt.Sprintf(`INSERT INTO agents (%s) VALUES (%s)`, agentColumns, marks), args...)
	return nameTaken(translate(err), "agent", a.Name)
}

// UpdateAgent implements ports.AgentWriter. Owner and creation time stay.
func (c configQ) UpdateAgent(ctx context.Context, a domain.Agent) error {
	args, err := agentArgs(a)
	if err != nil {
		return err
	}
	// args: id, owner, then the 19 writable columns, then created, updated.
	set := append([]any{}, args[2:len(args)-2]...)
	set = append(set, args[len(args)-1], a.ID)
	r, err := c.q.ExecContext(ctx, `UPDATE agents SET scope = ?, name = ?, avatar = ?, description = ?, instructions = ?,
		model = ?, provider_id = ?, context_window = ?, behavior = ?, resilience = ?, guardrails = ?, session = ?, approval = ?,
		compaction = ?, model_settings = ?, tools = ?, skills = ?, handoffs = ?, error_handlers = ?, updated_at = ?
		WHERE id = ?`, set...)
	return nameTaken(affected(r, err, "agent"), "agent", a.Name)
}

// DeleteAgent implements ports.AgentWriter; its memories cascade.
func (c configQ) DeleteAgent(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM agents WHERE id = ?`, id)
	return affected(r, err, "agent")
}

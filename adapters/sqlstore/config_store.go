package sqlstore

import (
	"context"
	"database/sql"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// configQ implements ports.ConfigTx over a querier: the read pool for plain
// reads, a write transaction inside InConfigTx and the nouns' narrower
// transactions, which are all the same transaction seen through a smaller
// port.
type configQ struct{ q querier }

// InConfigTx implements ports.ConfigStore.
func (db *DB) InConfigTx(ctx context.Context, fn func(tx ports.ConfigTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InProviderTx implements ports.ProviderStore.
func (db *DB) InProviderTx(ctx context.Context, fn func(tx ports.ProviderTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InAgentTx implements ports.AgentStore.
func (db *DB) InAgentTx(ctx context.Context, fn func(tx ports.AgentTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InSkillTx implements ports.SkillStore.
func (db *DB) InSkillTx(ctx context.Context, fn func(tx ports.SkillTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InWorkflowTx implements ports.WorkflowStore.
func (db *DB) InWorkflowTx(ctx context.Context, fn func(tx ports.WorkflowTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InMemoryTx implements ports.MemoryStore.
func (db *DB) InMemoryTx(ctx context.Context, fn func(tx ports.MemoryTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

// InGuardrailTx implements ports.GuardrailStore.
func (db *DB) InGuardrailTx(ctx context.Context, fn func(tx ports.GuardrailTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(configQ{tx}) })
}

func (db *DB) reader() configQ { return configQ{db.read} }

// The ConfigReader methods of the store read from the pool.

// FindProvider implements ports.ConfigReader.
func (db *DB) FindProvider(ctx context.Context, id string) (domain.Provider, error) {
	return db.reader().FindProvider(ctx, id)
}

// ListProviders implements ports.ConfigReader.
func (db *DB) ListProviders(ctx context.Context) ([]domain.Provider, error) {
	return db.reader().ListProviders(ctx)
}

// FindAgent implements ports.ConfigReader.
func (db *DB) FindAgent(ctx context.Context, id string) (domain.Agent, error) {
	return db.reader().FindAgent(ctx, id)
}

// ListAgents implements ports.ConfigReader.
func (db *DB) ListAgents(ctx context.Context) ([]domain.Agent, error) {
	return db.reader().ListAgents(ctx)
}

// AgentsUsingProvider implements ports.ConfigReader.
func (db *DB) AgentsUsingProvider(ctx context.Context, providerID string) ([]domain.Agent, error) {
	return db.reader().AgentsUsingProvider(ctx, providerID)
}

// AgentsUsingGuardrail implements ports.ConfigReader.
func (db *DB) AgentsUsingGuardrail(ctx context.Context, name string) ([]domain.Agent, error) {
	return db.reader().AgentsUsingGuardrail(ctx, name)
}

// AgentsHandingOffTo implements ports.ConfigReader.
func (db *DB) AgentsHandingOffTo(ctx context.Context, agentID string) ([]domain.Agent, error) {
	return db.reader().AgentsHandingOffTo(ctx, agentID)
}

// FindGuardrail implements ports.ConfigReader.
func (db *DB) FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error) {
	return db.reader().FindGuardrail(ctx, id)
}

// FindGuardrailByName implements ports.ConfigReader.
func (db *DB) FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error) {
	return db.reader().FindGuardrailByName(ctx, name)
}

// ListGuardrails implements ports.ConfigReader.
func (db *DB) ListGuardrails(ctx context.Context) ([]domain.Guardrail, error) {
	return db.reader().ListGuardrails(ctx)
}

// FindMemory implements ports.ConfigReader.
func (db *DB) FindMemory(ctx context.Context, id string) (domain.Memory, error) {
	return db.reader().FindMemory(ctx, id)
}

// ListMemories implements ports.ConfigReader.
func (db *DB) ListMemories(ctx context.Context) ([]domain.Memory, error) {
	return db.reader().ListMemories(ctx)
}

// CountMemories implements ports.ConfigReader.
func (db *DB) CountMemories(ctx context.Context, agentID string) (int, error) {
	return db.reader().CountMemories(ctx, agentID)
}

// affected turns "no row changed" into not_found.
func affected(r sql.Result, err error, what string) error {
	if err != nil {
		return translate(err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return notFound(what)
	}
	return nil
}

// collect runs a query and scans every row with scan.
func collect[T any](ctx context.Context, q querier, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := queryToEnd(ctx, q, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, v)
	}
	return out, translate(rows.Err())
}

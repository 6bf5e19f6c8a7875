package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// ProviderReader reads providers.
type ProviderReader interface {
	// FindProvider returns not_found when absent.
	FindProvider(ctx context.Context, id string) (domain.Provider, error)
	// ListProviders returns every provider, newest first.
	ListProviders(ctx context.Context) ([]domain.Provider, error)
}

// AgentReader reads agents and the agents that name another row, which a
// rule about that row (a delete, a rename, an unpublish) asks about.
type AgentReader interface {
	// FindAgent returns not_found when absent.
	FindAgent(ctx context.Context, id string) (domain.Agent, error)
	// ListAgents returns every agent, newest first.
	ListAgents(ctx context.Context) ([]domain.Agent, error)
	// AgentsUsingProvider returns the agents naming the provider, as their
	// provider or a fallback.
	AgentsUsingProvider(ctx context.Context, providerID string) ([]domain.Agent, error)
	// AgentsUsingGuardrail returns the agents naming the guardrail.
	AgentsUsingGuardrail(ctx context.Context, name string) ([]domain.Agent, error)
	// AgentsHandingOffTo returns the agents listing agentID in handoffs.
	AgentsHandingOffTo(ctx context.Context, agentID string) ([]domain.Agent, error)
}

// ConfigReader reads configuration rows of every noun. The store answers
// from its read pool; a ConfigTx answers inside its transaction, so checks
// and writes see one state. A service that keeps one noun takes that
// noun's store (SkillStore, WorkflowStore, MemoryStore, GuardrailStore)
// instead.
type ConfigReader interface {
	ProviderReader
	AgentReader
	GuardrailReader
	MemoryReader
	WorkflowReader
	SkillReader
}

// ProviderWriter writes providers. Inserts and updates return conflict
// when the name is taken among globals or among one owner's privates;
// updates and deletes return not_found for a missing row.
type ProviderWriter interface {
	InsertProvider(ctx context.Context, p domain.Provider) error
	UpdateProvider(ctx context.Context, p domain.Provider) error
	DeleteProvider(ctx context.Context, id string) error
}

// AgentWriter writes agents, under the same name rule as providers.
type AgentWriter interface {
	InsertAgent(ctx context.Context, a domain.Agent) error
	UpdateAgent(ctx context.Context, a domain.Agent) error
	// DeleteAgent removes the agent and its memories.
	DeleteAgent(ctx context.Context, id string) error
}

// ConfigWriter writes configuration rows of every noun; each noun's writer
// says its uniqueness domain.
type ConfigWriter interface {
	ProviderWriter
	AgentWriter
	GuardrailWriter
	MemoryWriter
	WorkflowWriter
	SkillWriter
}

// ConfigTx is one write transaction over the whole configuration, for a
// rule that spans nouns (an agent's references to providers, guardrails,
// handoff targets and workflows).
type ConfigTx interface {
	ConfigReader
	ConfigWriter
}

// ConfigStore keeps the configuration. Every write goes through one
// transaction — InConfigTx, or the narrower one of a noun's store — so a
// rule that spans rows (a reference, a last use) is checked and acted on in
// one transaction.
type ConfigStore interface {
	ConfigReader
	SkillStore
	WorkflowStore
	MemoryStore
	GuardrailStore
	// InConfigTx runs fn in one write transaction, committed when fn returns
	// nil and rolled back otherwise.
	InConfigTx(ctx context.Context, fn func(tx ConfigTx) error) error
}

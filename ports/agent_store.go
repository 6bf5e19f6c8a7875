package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

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

// AgentWriter writes agents, under the same name rule as providers.
type AgentWriter interface {
	InsertAgent(ctx context.Context, a domain.Agent) error
	UpdateAgent(ctx context.Context, a domain.Agent) error
	// DeleteAgent removes the agent and its memories.
	DeleteAgent(ctx context.Context, id string) error
}

// AgentTx is one configuration write transaction as the agents service
// sees it: agents, and what an agent references — providers, guardrails,
// handoff targets, the workflows that run it.
type AgentTx interface {
	AgentReader
	AgentWriter
	ProviderReader
	GuardrailReader
	WorkflowReader
}

// AgentStore keeps agents.
type AgentStore interface {
	AgentReader
	// InAgentTx runs fn in one configuration write transaction, committed
	// when fn returns nil and rolled back otherwise.
	InAgentTx(ctx context.Context, fn func(tx AgentTx) error) error
}

package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// ConfigReader reads configuration rows — providers, agents, guardrails,
// memories. The store answers from its read pool; a ConfigTx answers inside
// its transaction, so checks and writes see one state.
type ConfigReader interface {
	// FindProvider returns not_found when absent.
	FindProvider(ctx context.Context, id string) (domain.Provider, error)
	// ListProviders returns every provider, newest first.
	ListProviders(ctx context.Context) ([]domain.Provider, error)
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

	// FindGuardrail returns not_found when absent.
	FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error)
	// FindGuardrailByName matches case-insensitively; not_found when absent.
	FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error)
	// ListGuardrails returns every guardrail, built-ins first, then by name.
	ListGuardrails(ctx context.Context) ([]domain.Guardrail, error)

	// FindMemory returns not_found when absent.
	FindMemory(ctx context.Context, id string) (domain.Memory, error)
	// ListMemories returns every memory, global ones first, then by key.
	ListMemories(ctx context.Context) ([]domain.Memory, error)
	// CountMemories counts the memories of a scope ("" = global).
	CountMemories(ctx context.Context, agentID string) (int, error)

	// FindWorkflow returns not_found when absent.
	FindWorkflow(ctx context.Context, id string) (domain.Workflow, error)
	// ListWorkflows returns every workflow, newest first.
	ListWorkflows(ctx context.Context) ([]domain.Workflow, error)
	// WorkflowsUsingAgent returns the workflows with a step the agent runs.
	WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error)

	// FindSkill returns not_found when absent.
	FindSkill(ctx context.Context, id string) (domain.Skill, error)
	// ListSkills returns every skill, newest first.
	ListSkills(ctx context.Context) ([]domain.Skill, error)
}

// ConfigWriter writes configuration rows. Inserts and updates return
// conflict when a name is taken in its uniqueness domain (providers and
// agents and workflows: among globals, or among one owner's privates;
// guardrails: all;
// memories: per scope); updates and deletes return not_found for a missing
// row.
type ConfigWriter interface {
	InsertProvider(ctx context.Context, p domain.Provider) error
	UpdateProvider(ctx context.Context, p domain.Provider) error
	DeleteProvider(ctx context.Context, id string) error

	InsertAgent(ctx context.Context, a domain.Agent) error
	UpdateAgent(ctx context.Context, a domain.Agent) error
	// DeleteAgent removes the agent and its memories.
	DeleteAgent(ctx context.Context, id string) error

	InsertGuardrail(ctx context.Context, g domain.Guardrail) error
	UpdateGuardrail(ctx context.Context, g domain.Guardrail) error
	DeleteGuardrail(ctx context.Context, id string) error

	InsertMemory(ctx context.Context, m domain.Memory) error
	UpdateMemory(ctx context.Context, m domain.Memory) error
	DeleteMemory(ctx context.Context, id string) error

	InsertWorkflow(ctx context.Context, w domain.Workflow) error
	UpdateWorkflow(ctx context.Context, w domain.Workflow) error
	DeleteWorkflow(ctx context.Context, id string) error

	// Skills are unique per (repo label, name) among globals and among one
	// owner's privates.
	InsertSkill(ctx context.Context, s domain.Skill) error
	UpdateSkill(ctx context.Context, s domain.Skill) error
	DeleteSkill(ctx context.Context, id string) error
}

// ConfigTx is one write transaction over the configuration.
type ConfigTx interface {
	ConfigReader
	ConfigWriter
}

// ConfigStore keeps the configuration. Every write goes through
// InConfigTx, so a rule that spans rows (a reference, a last use) is checked
// and acted on in one transaction.
type ConfigStore interface {
	ConfigReader
	// InConfigTx runs fn in one write transaction, committed when fn returns
	// nil and rolled back otherwise.
	InConfigTx(ctx context.Context, fn func(tx ConfigTx) error) error
}

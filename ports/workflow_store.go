package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// WorkflowReader reads workflow definitions.
type WorkflowReader interface {
	// FindWorkflow returns not_found when absent.
	FindWorkflow(ctx context.Context, id string) (domain.Workflow, error)
	// ListWorkflows returns every workflow, newest first.
	ListWorkflows(ctx context.Context) ([]domain.Workflow, error)
	// WorkflowsUsingAgent returns the workflows with a step the agent runs.
	WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error)
}

// WorkflowView is what the workflows service reads: the definitions, and
// the agents their steps run.
type WorkflowView interface {
	WorkflowReader
	AgentReader
}

// WorkflowWriter writes workflow definitions. Inserts and updates return
// conflict when the name is taken among globals or among one owner's
// privates; updates and deletes return not_found for a missing row.
type WorkflowWriter interface {
	InsertWorkflow(ctx context.Context, w domain.Workflow) error
	UpdateWorkflow(ctx context.Context, w domain.Workflow) error
	DeleteWorkflow(ctx context.Context, id string) error
}

// WorkflowTx is one configuration write transaction as the workflows
// service sees it.
type WorkflowTx interface {
	WorkflowView
	WorkflowWriter
}

// WorkflowStore keeps workflow definitions.
type WorkflowStore interface {
	WorkflowView
	// InWorkflowTx runs fn in one configuration write transaction,
	// committed when fn returns nil and rolled back otherwise.
	InWorkflowTx(ctx context.Context, fn func(tx WorkflowTx) error) error
}

package workbench

import (
	"context"

	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/sandboxes"
)

// mcpProjects lets the MCP service run stdio servers' programs inside
// projects' sandboxes: the store finds the project, the sandbox service
// holds its instance.
type mcpProjects struct {
	db        *sqlstore.DB
	sandboxes *sandboxes.Service
}

func (m mcpProjects) FindProject(ctx context.Context, id string) (domain.Project, error) {
	return m.db.FindProject(ctx, id)
}

func (m mcpProjects) HoldForProgram(ctx context.Context, projectID string) (mcp.ProgramHold, error) {
	l, err := m.sandboxes.HoldForProgram(ctx, projectID)
	if err != nil {
		return nil, err // never a typed nil in the interface
	}
	return l, nil
}

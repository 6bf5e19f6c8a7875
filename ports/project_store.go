package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// ProjectReader reads sandboxes, projects and the sessions binding them.
// The store answers from its read pool; a ProjectTx answers inside its
// transaction.
type ProjectReader interface {
	// FindSandbox returns not_found when absent.
	FindSandbox(ctx context.Context, id string) (domain.Sandbox, error)
	// ListSandboxes returns every sandbox by name.
	ListSandboxes(ctx context.Context) ([]domain.Sandbox, error)
	// FindProject returns not_found when absent.
	FindProject(ctx context.Context, id string) (domain.Project, error)
	// ListProjects returns ownerID's projects ("" = everyone's), newest
	// first.
	ListProjects(ctx context.Context, ownerID string) ([]domain.Project, error)
	// ProjectsOnSandbox returns the projects living on a sandbox.
	ProjectsOnSandbox(ctx context.Context, sandboxID string) ([]domain.Project, error)
	// SessionCounts returns, per project id, how many sessions bind it
	// (absent: none).
	SessionCounts(ctx context.Context, projectIDs []string) (map[string]int, error)
}

// ProjectWriter writes sandboxes and projects. Inserts and updates return
// conflict for a taken name (sandboxes: all; projects: per owner); updates
// and deletes return not_found for a missing row.
type ProjectWriter interface {
	InsertSandbox(ctx context.Context, s domain.Sandbox) error
	// UpdateSandbox stores s when the row is still at s.Revision-1 (a
	// compare-and-set: conflict otherwise). It leaves the pinned host key
	// alone: that is not configuration.
	UpdateSandbox(ctx context.Context, s domain.Sandbox) error
	DeleteSandbox(ctx context.Context, id string) error
	// ClearSSHHostKey forgets the host key pinned for a sandbox (the next
	// connection pins the key it meets); its revision does not move.
	ClearSSHHostKey(ctx context.Context, sandboxID string) error

	InsertProject(ctx context.Context, p domain.Project) error
	// UpdateProject stores p when the row is still at p.Revision-1.
	UpdateProject(ctx context.Context, p domain.Project) error
	DeleteProject(ctx context.Context, id string) error
	// BumpGenerations moves the runtime generation of every project on a
	// sandbox, retiring their instances.
	BumpGenerations(ctx context.Context, sandboxID string) error

	// BindSession sets a session's project when it has none. It returns
	// the project the session binds afterwards and whether this call bound
	// it.
	BindSession(ctx context.Context, sessionID, projectID string) (bound string, won bool, err error)
}

// ProjectTx is one write transaction over sandboxes and projects.
type ProjectTx interface {
	ProjectReader
	ProjectWriter
}

// ProjectStore keeps sandboxes and projects. Every write goes through
// InProjectTx, so a reference check and the write it guards see one state.
type ProjectStore interface {
	ProjectReader
	// InProjectTx runs fn in one write transaction.
	InProjectTx(ctx context.Context, fn func(tx ProjectTx) error) error
}

package sandboxes

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Bind binds a session to one of the caller's projects — the first
// project-carrying run does this, once and for ever. It returns the project
// the session binds afterwards and whether this call bound it. A project
// that is not the caller's is a validation error on project_id, and the
// session stays unbound.
func (s *Service) Bind(ctx context.Context, p domain.Principal, sessionID, projectID string) (string, bool, error) {
	var bound string
	var won bool
	err := s.d.Store.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		pr, err := tx.FindProject(ctx, projectID)
		if errs.Is(err, errs.NotFound) || (err == nil && pr.CheckOwner(p) != nil) {
			return errs.Field("project_id", "no such project")
		}
		if err != nil {
			return err
		}
		bound, won, err = tx.BindSession(ctx, sessionID, projectID)
		return err
	})
	return bound, won, err
}

// Prompt is the sandbox prompt of a project's sandbox: appended to the
// instructions of agents working on it.
func (s *Service) Prompt(ctx context.Context, projectID string) (string, error) {
	p, err := s.d.Store.FindProject(ctx, projectID)
	if err != nil {
		return "", err
	}
	sb, err := s.d.Store.FindSandbox(ctx, p.SandboxID)
	return sb.Prompt, err
}

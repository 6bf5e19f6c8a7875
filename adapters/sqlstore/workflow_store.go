package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const workflowColumns = `id, owner_id, scope, name, description, steps, budget, created_at, updated_at`

func scanWorkflow(r rowScanner) (domain.Workflow, error) {
	var w domain.Workflow
	var scope, steps, budget string
	var created, updated int64
	if err := r.Scan(&w.ID, &w.OwnerID, &scope, &w.Name, &w.Description, &steps, &budget, &created, &updated); err != nil {
		return w, err
	}
	if err := json.Unmarshal([]byte(steps), &w.Steps); err != nil {
		return w, errs.Wrap(errs.Internal, err, "workflow %s has malformed steps", w.ID)
	}
	if err := json.Unmarshal([]byte(budget), &w.Budget); err != nil {
		return w, errs.Wrap(errs.Internal, err, "workflow %s has a malformed budget", w.ID)
	}
	w.Scope = domain.Scope(scope)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return w, nil
}

// workflowJSON encodes a workflow's JSON columns.
func workflowJSON(w domain.Workflow) (steps, budget string, err error) {
	s, err := json.Marshal(w.Steps)
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "encode workflow %s", w.ID)
	}
	b, err := json.Marshal(w.Budget)
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "encode workflow %s", w.ID)
	}
	return string(s), string(b), nil
}

// FindWorkflow implements ports.WorkflowReader.
func (c configQ) FindWorkflow(ctx context.Context, id string) (domain.Workflow, error) {
	w, err := scanWorkflow(c.q.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return w, notFound("workflow")
	}
	return w, translate(err)
}

// ListWorkflows implements ports.WorkflowReader.
func (c configQ) ListWorkflows(ctx context.Context) ([]domain.Workflow, error) {
	return collect(ctx, c.q, scanWorkflow, `SELECT `+workflowColumns+` FROM workflows ORDER BY id DESC`)
}

// WorkflowsUsingAgent implements ports.WorkflowReader.
func (c configQ) WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error) {
	// The steps are a JSON column: looked into in Go (see agentsWhere).
	all, err := c.ListWorkflows(ctx)
	if err != nil {
		return nil, err
	}
	out := []domain.Workflow{}
	for _, w := range all {
		if slices.ContainsFunc(w.Steps, func(s domain.WorkflowStep) bool { return s.Agent == agentID }) {
			out = append(out, w)
		}
	}
	return out, nil
}

// InsertWorkflow implements ports.WorkflowWriter.
func (c configQ) InsertWorkflow(ctx context.Context, w domain.Workflow) error {
	steps, budget, err := workflowJSON(w)
	if err != nil {
		return err
	}
	_, err = c.q.ExecContext(ctx, `INSERT INTO workflows (`+workflowColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.OwnerID, string(w.Scope), w.Name, w.Description, steps, budget, ms(w.CreatedAt), ms(w.UpdatedAt))
	return nameTaken(translate(err), "workflow", w.Name)
}

// UpdateWorkflow implements ports.WorkflowWriter. Owner and creation time
// stay.
func (c configQ) UpdateWorkflow(ctx context.Context, w domain.Workflow) error {
	steps, budget, err := workflowJSON(w)
	if err != nil {
		return err
	}
	r, err := c.q.ExecContext(ctx, `UPDATE workflows SET scope = ?, name = ?, description = ?, steps = ?, budget = ?, updated_at = ?
		WHERE id = ?`, string(w.Scope), w.Name, w.Description, steps, budget, ms(w.UpdatedAt), w.ID)
	return nameTaken(affected(r, err, "workflow"), "workflow", w.Name)
}

// DeleteWorkflow implements ports.WorkflowWriter.
func (c configQ) DeleteWorkflow(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM workflows WHERE id = ?`, id)
	return affected(r, err, "workflow")
}

// FindWorkflow implements ports.WorkflowReader.
func (db *DB) FindWorkflow(ctx context.Context, id string) (domain.Workflow, error) {
	return db.reader().FindWorkflow(ctx, id)
}

// ListWorkflows implements ports.WorkflowReader.
func (db *DB) ListWorkflows(ctx context.Context) ([]domain.Workflow, error) {
	return db.reader().ListWorkflows(ctx)
}

// WorkflowsUsingAgent implements ports.WorkflowReader.
func (db *DB) WorkflowsUsingAgent(ctx context.Context, agentID string) ([]domain.Workflow, error) {
	return db.reader().WorkflowsUsingAgent(ctx, agentID)
}

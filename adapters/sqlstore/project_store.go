package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// projectQ implements ports.ProjectTx over a querier.
type projectQ struct{ q querier }

// InProjectTx implements ports.ProjectStore.
func (db *DB) InProjectTx(ctx context.Context, fn func(tx ports.ProjectTx) error) error {
	return db.tx(ctx, func(tx txQ) error { return fn(projectQ{tx}) })
}

// FindSandbox implements ports.ProjectReader.
func (db *DB) FindSandbox(ctx context.Context, id string) (domain.Sandbox, error) {
	return projectQ{db.read}.FindSandbox(ctx, id)
}

// ListSandboxes implements ports.ProjectReader.
func (db *DB) ListSandboxes(ctx context.Context) ([]domain.Sandbox, error) {
	return projectQ{db.read}.ListSandboxes(ctx)
}

// FindProject implements ports.ProjectReader.
func (db *DB) FindProject(ctx context.Context, id string) (domain.Project, error) {
	return projectQ{db.read}.FindProject(ctx, id)
}

// ListProjects implements ports.ProjectReader.
func (db *DB) ListProjects(ctx context.Context, ownerID string) ([]domain.Project, error) {
	return projectQ{db.read}.ListProjects(ctx, ownerID)
}

// ProjectsOnSandbox implements ports.ProjectReader.
func (db *DB) ProjectsOnSandbox(ctx context.Context, sandboxID string) ([]domain.Project, error) {
	return projectQ{db.read}.ProjectsOnSandbox(ctx, sandboxID)
}

// SessionCounts implements ports.ProjectReader.
func (db *DB) SessionCounts(ctx context.Context, projectIDs []string) (map[string]int, error) {
	return projectQ{db.read}.SessionCounts(ctx, projectIDs)
}

const sandboxColumns = `id, name, type, config, prompt, revision, created_at, updated_at, ssh_host_key, ssh_host_key_pinned_at`

func scanSandbox(r rowScanner) (domain.Sandbox, error) {
	var s domain.Sandbox
	var config string
	var created, updated, pinned int64
	if err := r.Scan(&s.ID, &s.Name, &s.Type, &config, &s.Prompt, &s.Revision, &created, &updated,
		&s.SSHHostKey.Key, &pinned); err != nil {
		return s, err
	}
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	if !s.SSHHostKey.IsZero() {
		s.SSHHostKey.PinnedAt = fromMS(pinned)
	}
	var err error
	switch s.Type {
	case domain.SandboxDocker:
		s.Docker = &domain.DockerConfig{}
		err = json.Unmarshal([]byte(config), s.Docker)
	case domain.SandboxE2B:
		s.E2B = &domain.E2BConfig{}
		err = json.Unmarshal([]byte(config), s.E2B)
	}
	if err != nil {
		return s, errs.Wrap(errs.Internal, err, "sandbox %s has a malformed config", s.ID)
	}
	return s, nil
}

func sandboxConfig(s domain.Sandbox) (string, error) {
	var v any = map[string]any{}
	switch {
	case s.Docker != nil:
		v = s.Docker
	case s.E2B != nil:
		v = s.E2B
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// FindSandbox implements ports.ProjectReader.
func (p projectQ) FindSandbox(ctx context.Context, id string) (domain.Sandbox, error) {
	s, err := scanSandbox(p.q.QueryRowContext(ctx, `SELECT `+sandboxColumns+` FROM sandboxes WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("sandbox")
	}
	return s, translate(err)
}

// ListSandboxes implements ports.ProjectReader.
func (p projectQ) ListSandboxes(ctx context.Context) ([]domain.Sandbox, error) {
	return collect(ctx, p.q, scanSandbox, `SELECT `+sandboxColumns+` FROM sandboxes ORDER BY name`)
}

// InsertSandbox implements ports.ProjectWriter.
func (p projectQ) InsertSandbox(ctx context.Context, s domain.Sandbox) error {
	config, err := sandboxConfig(s)
	if err != nil {
		return err
	}
	_, err = p.q.ExecContext(ctx, `INSERT INTO sandboxes (`+sandboxColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Name, s.Type, config, s.Prompt, s.Revision, ms(s.CreatedAt), ms(s.UpdatedAt), s.SSHHostKey.Key, pinnedMS(s.SSHHostKey))
	return nameTaken(translate(err), "sandbox", s.Name)
}

// UpdateSandbox implements ports.ProjectWriter. The pinned host key is not
// among the columns it sets: only the pin's own calls write it.
func (p projectQ) UpdateSandbox(ctx context.Context, s domain.Sandbox) error {
	config, err := sandboxConfig(s)
	if err != nil {
		return err
	}
	r, err := p.q.ExecContext(ctx, `UPDATE sandboxes SET name = ?, type = ?, config = ?, prompt = ?, revision = ?, updated_at = ?
		WHERE id = ? AND revision = ?`, s.Name, s.Type, config, s.Prompt, s.Revision, ms(s.UpdatedAt), s.ID, s.Revision-1)
	if err := affected(r, err, "sandbox"); errs.Is(err, errs.NotFound) {
		return errs.E(errs.Conflict, "the sandbox changed since it was read: re-read and retry")
	} else if err != nil {
		return nameTaken(err, "sandbox", s.Name)
	}
	return nil
}

// DeleteSandbox implements ports.ProjectWriter.
func (p projectQ) DeleteSandbox(ctx context.Context, id string) error {
	r, err := p.q.ExecContext(ctx, `DELETE FROM sandboxes WHERE id = ?`, id)
	return affected(r, err, "sandbox")
}

const projectColumns = `id, owner_id, name, sandbox_id, env, revision, generation, created_at, updated_at, instance_ref`

type envVarJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func scanProject(r rowScanner) (domain.Project, error) {
	var p domain.Project
	var env string
	var created, updated int64
	if err := r.Scan(&p.ID, &p.OwnerID, &p.Name, &p.SandboxID, &env, &p.Revision, &p.Generation, &created, &updated, &p.InstanceRef); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	var vars []envVarJSON
	if err := json.Unmarshal([]byte(env), &vars); err != nil {
		return p, errs.Wrap(errs.Internal, err, "project %s has a malformed env", p.ID)
	}
	for _, v := range vars {
		p.Env = append(p.Env, domain.EnvVar{Name: v.Name, Value: v.Value})
	}
	return p, nil
}

func projectEnv(p domain.Project) string {
	vars := make([]envVarJSON, 0, len(p.Env))
	for _, v := range p.Env {
		vars = append(vars, envVarJSON{Name: v.Name, Value: v.Value})
	}
	b, _ := json.Marshal(vars)
	return string(b)
}

// FindProject implements ports.ProjectReader.
func (p projectQ) FindProject(ctx context.Context, id string) (domain.Project, error) {
	pr, err := scanProject(p.q.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return pr, notFound("project")
	}
	return pr, translate(err)
}

// ListProjects implements ports.ProjectReader.
func (p projectQ) ListProjects(ctx context.Context, ownerID string) ([]domain.Project, error) {
	if ownerID == "" {
		return collect(ctx, p.q, scanProject, `SELECT `+projectColumns+` FROM projects ORDER BY id DESC`)
	}
	return collect(ctx, p.q, scanProject, `SELECT `+projectColumns+` FROM projects WHERE owner_id = ? ORDER BY id DESC`, ownerID)
}

// ProjectsOnSandbox implements ports.ProjectReader.
func (p projectQ) ProjectsOnSandbox(ctx context.Context, sandboxID string) ([]domain.Project, error) {
	return collect(ctx, p.q, scanProject, `SELECT `+projectColumns+` FROM projects WHERE sandbox_id = ? ORDER BY id`, sandboxID)
}

// SessionCounts implements ports.ProjectReader.
func (p projectQ) SessionCounts(ctx context.Context, projectIDs []string) (map[string]int, error) {
	out := map[string]int{}
	if len(projectIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(projectIDs))
	for i, id := range projectIDs {
		args[i] = id
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")
	rows, err := p.q.QueryContext(ctx, `SELECT project_id, COUNT(*) FROM sessions WHERE project_id IN (`+marks+`) GROUP BY project_id`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, translate(err)
		}
		out[id] = n
	}
	return out, translate(rows.Err())
}

// InsertProject implements ports.ProjectWriter.
func (p projectQ) InsertProject(ctx context.Context, pr domain.Project) error {
	_, err := p.q.ExecContext(ctx, `INSERT INTO projects (`+projectColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		pr.ID, pr.OwnerID, pr.Name, pr.SandboxID, projectEnv(pr), pr.Revision, pr.Generation, ms(pr.CreatedAt), ms(pr.UpdatedAt), pr.InstanceRef)
	return nameTaken(translate(err), "project", pr.Name)
}

// UpdateProject implements ports.ProjectWriter.
func (p projectQ) UpdateProject(ctx context.Context, pr domain.Project) error {
	r, err := p.q.ExecContext(ctx, `UPDATE projects SET name = ?, sandbox_id = ?, env = ?, revision = ?, generation = ?, updated_at = ?
		WHERE id = ? AND revision = ?`, pr.Name, pr.SandboxID, projectEnv(pr), pr.Revision, pr.Generation, ms(pr.UpdatedAt), pr.ID, pr.Revision-1)
	if err := affected(r, err, "project"); errs.Is(err, errs.NotFound) {
		return errs.E(errs.Conflict, "the project changed since it was read: re-read and retry")
	} else if err != nil {
		return nameTaken(err, "project", pr.Name)
	}
	return nil
}

// DeleteProject implements ports.ProjectWriter.
func (p projectQ) DeleteProject(ctx context.Context, id string) error {
	r, err := p.q.ExecContext(ctx, `DELETE FROM projects WHERE id = ?`, id)
	return affected(r, err, "project")
}

// BumpGenerations implements ports.ProjectWriter.
func (p projectQ) BumpGenerations(ctx context.Context, sandboxID string) error {
	_, err := p.q.ExecContext(ctx, `UPDATE projects SET generation = generation + 1 WHERE sandbox_id = ?`, sandboxID)
	return translate(err)
}

// BindSession implements ports.ProjectWriter.
func (p projectQ) BindSession(ctx context.Context, sessionID, projectID string) (string, bool, error) {
	r, err := p.q.ExecContext(ctx, `UPDATE sessions SET project_id = ? WHERE id = ? AND project_id = ''`, projectID, sessionID)
	if err != nil {
		return "", false, translate(err)
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return projectID, true, nil
	}
	var bound string
	err = p.q.QueryRowContext(ctx, `SELECT project_id FROM sessions WHERE id = ?`, sessionID).Scan(&bound)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, notFound("session")
	}
	return bound, false, translate(err)
}

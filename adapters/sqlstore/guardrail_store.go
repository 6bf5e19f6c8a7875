package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const guardrailColumns = `id, name, description, stages, mode, pattern, max_chars, blocking, builtin, created_at, updated_at`

func scanGuardrail(r rowScanner) (domain.Guardrail, error) {
	var g domain.Guardrail
	var stages, mode string
	var created, updated int64
	if err := r.Scan(&g.ID, &g.Name, &g.Description, &stages, &mode, &g.Pattern, &g.MaxChars, &g.Blocking, &g.Builtin, &created, &updated); err != nil {
		return g, err
	}
	if err := json.Unmarshal([]byte(stages), &g.Stages); err != nil {
		return g, errs.Wrap(errs.Internal, err, "guardrail %s has malformed stages", g.ID)
	}
	g.Mode = domain.GuardrailMode(mode)
	g.CreatedAt, g.UpdatedAt = fromMS(created), fromMS(updated)
	return g, nil
}

func (c configQ) findGuardrail(ctx context.Context, where string, arg any) (domain.Guardrail, error) {
	g, err := scanGuardrail(c.q.QueryRowContext(ctx, `SELECT `+guardrailColumns+` FROM guardrails WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return g, notFound("guardrail")
	}
	return g, translate(err)
}

// FindGuardrail implements ports.GuardrailReader.
func (c configQ) FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error) {
	return c.findGuardrail(ctx, "id = ?", id)
}

// FindGuardrailByName implements ports.GuardrailReader.
func (c configQ) FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error) {
	return c.findGuardrail(ctx, "name = ?", name)
}

// ListGuardrails implements ports.GuardrailReader.
func (c configQ) ListGuardrails(ctx context.Context) ([]domain.Guardrail, error) {
	return collect(ctx, c.q, scanGuardrail, `SELECT `+guardrailColumns+` FROM guardrails ORDER BY builtin DESC, name`)
}

func guardrailArgs(g domain.Guardrail) []any {
	stages, _ := json.Marshal(g.Stages)
	return []any{g.Name, g.Description, string(stages), string(g.Mode), g.Pattern, g.MaxChars, g.Blocking}
}

// InsertGuardrail implements ports.GuardrailWriter.
func (c configQ) InsertGuardrail(ctx context.Context, g domain.Guardrail) error {
	args := append([]any{g.ID}, guardrailArgs(g)...)
	args = append(args, g.Builtin, ms(g.CreatedAt), ms(g.UpdatedAt))
	_, err := c.q.ExecContext(ctx, `INSERT INTO guardrails (`+guardrailColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return guardrailNameTaken(translate(err), g.Name)
}

// UpdateGuardrail implements ports.GuardrailWriter; builtin never changes.
func (c configQ) UpdateGuardrail(ctx context.Context, g domain.Guardrail) error {
	args := append(guardrailArgs(g), ms(g.UpdatedAt), g.ID)
	r, err := c.q.ExecContext(ctx, `UPDATE guardrails SET name = ?, description = ?, stages = ?, mode = ?, pattern = ?,
		max_chars = ?, blocking = ?, updated_at = ? WHERE id = ?`, args...)
	return guardrailNameTaken(affected(r, err, "guardrail"), g.Name)
}

// DeleteGuardrail implements ports.GuardrailWriter.
func (c configQ) DeleteGuardrail(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM guardrails WHERE id = ?`, id)
	return affected(r, err, "guardrail")
}

func guardrailNameTaken(err error, name string) error {
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "a guardrail named %q already exists", name)
	}
	return err
}

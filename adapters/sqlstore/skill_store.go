package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
)

const skillColumns = `id, owner_id, scope, name, description, content, source_repo, repo_label, source_path, source_commit, detached,
	created_at, updated_at`

func scanSkill(r rowScanner) (domain.Skill, error) {
	var s domain.Skill
	var scope string
	var created, updated int64
	err := r.Scan(&s.ID, &s.OwnerID, &scope, &s.Name, &s.Description, &s.Content, &s.SourceRepo, &s.RepoLabel, &s.SourcePath,
		&s.SourceCommit, &s.Detached, &created, &updated)
	s.Scope = domain.Scope(scope)
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	return s, err
}

// FindSkill implements ports.SkillReader.
func (c configQ) FindSkill(ctx context.Context, id string) (domain.Skill, error) {
	s, err := scanSkill(c.q.QueryRowContext(ctx, `SELECT `+skillColumns+` FROM skills WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("skill")
	}
	return s, translate(err)
}

// ListSkills implements ports.SkillReader.
func (c configQ) ListSkills(ctx context.Context) ([]domain.Skill, error) {
	return collect(ctx, c.q, scanSkill, `SELECT `+skillColumns+` FROM skills ORDER BY id DESC`)
}

// InsertSkill implements ports.SkillWriter.
func (c configQ) InsertSkill(ctx context.Context, s domain.Skill) error {
	_, err := c.q.ExecContext(ctx, `INSERT INTO skills (`+skillColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.OwnerID, string(s.Scope), s.Name, s.Description, s.Content, s.SourceRepo, s.RepoLabel, s.SourcePath, s.SourceCommit,
		s.Detached, ms(s.CreatedAt), ms(s.UpdatedAt))
	return nameTaken(translate(err), "skill", s.ModelName())
}

// UpdateSkill implements ports.SkillWriter. Owner and creation time stay.
func (c configQ) UpdateSkill(ctx context.Context, s domain.Skill) error {
	r, err := c.q.ExecContext(ctx, `UPDATE skills SET scope = ?, name = ?, description = ?, content = ?, source_repo = ?, repo_label = ?,
		source_path = ?, source_commit = ?, detached = ?, updated_at = ? WHERE id = ?`,
		string(s.Scope), s.Name, s.Description, s.Content, s.SourceRepo, s.RepoLabel, s.SourcePath, s.SourceCommit, s.Detached,
		ms(s.UpdatedAt), s.ID)
	return nameTaken(affected(r, err, "skill"), "skill", s.ModelName())
}

// DeleteSkill implements ports.SkillWriter.
func (c configQ) DeleteSkill(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM skills WHERE id = ?`, id)
	return affected(r, err, "skill")
}

// FindSkill implements ports.SkillReader.
func (db *DB) FindSkill(ctx context.Context, id string) (domain.Skill, error) {
	return db.reader().FindSkill(ctx, id)
}

// ListSkills implements ports.SkillReader.
func (db *DB) ListSkills(ctx context.Context) ([]domain.Skill, error) {
	return db.reader().ListSkills(ctx)
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const memoryColumns = `id, coalesce(agent_config_id, ''), key, content, created_at, updated_at`

func scanMemory(r rowScanner) (domain.Memory, error) {
	var m domain.Memory
	var created, updated int64
	err := r.Scan(&m.ID, &m.AgentID, &m.Key, &m.Content, &created, &updated)
	m.CreatedAt, m.UpdatedAt = fromMS(created), fromMS(updated)
	return m, err
}

func nullable(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// FindMemory implements ports.MemoryReader.
func (c configQ) FindMemory(ctx context.Context, id string) (domain.Memory, error) {
	m, err := scanMemory(c.q.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, notFound("memory")
	}
	return m, translate(err)
}

// ListMemories implements ports.MemoryReader.
func (c configQ) ListMemories(ctx context.Context) ([]domain.Memory, error) {
	return collect(ctx, c.q, scanMemory, `SELECT `+memoryColumns+` FROM memories
		ORDER BY agent_config_id IS NOT NULL, agent_config_id, key`)
}

// CountMemories implements ports.MemoryReader.
func (c configQ) CountMemories(ctx context.Context, agentID string) (int, error) {
	var n int
	err := c.q.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE coalesce(agent_config_id, '') = ?`, agentID).Scan(&n)
	return n, translate(err)
}

// InsertMemory implements ports.MemoryWriter.
func (c configQ) InsertMemory(ctx context.Context, m domain.Memory) error {
	_, err := c.q.ExecContext(ctx, `INSERT INTO memories (id, agent_config_id, key, content, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, m.ID, nullable(m.AgentID), m.Key, m.Content, ms(m.CreatedAt), ms(m.UpdatedAt))
	return memoryKeyTaken(translate(err), m.Key)
}

// UpdateMemory implements ports.MemoryWriter; the scope never changes.
func (c configQ) UpdateMemory(ctx context.Context, m domain.Memory) error {
	r, err := c.q.ExecContext(ctx, `UPDATE memories SET key = ?, content = ?, updated_at = ? WHERE id = ?`,
		m.Key, m.Content, ms(m.UpdatedAt), m.ID)
	return memoryKeyTaken(affected(r, err, "memory"), m.Key)
}

// DeleteMemory implements ports.MemoryWriter.
func (c configQ) DeleteMemory(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
	return affected(r, err, "memory")
}

func memoryKeyTaken(err error, key string) error {
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "a memory with the key %q already exists in that scope", key)
	}
	return err
}

package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

var _ ports.MCPServerStore = (*DB)(nil)

const mcpColumns = `id, owner_id, scope, name, enabled, config, oauth_grant, created_at, updated_at`

func scanMCPServer(r rowScanner) (domain.MCPServer, error) {
	var s domain.MCPServer
	var scope, config string
	var created, updated int64
	if err := r.Scan(&s.ID, &s.OwnerID, &scope, &s.Name, &s.Enabled, &config, &s.SealedGrant, &created, &updated); err != nil {
		return s, err
	}
	s.Scope = domain.Scope(scope)
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	if err := json.Unmarshal([]byte(config), &s.Config); err != nil {
		return s, errs.Wrap(errs.Internal, err, "MCP server %s has a malformed config", s.ID)
	}
	return s, nil
}

func findMCPServer(ctx context.Context, q querier, id string) (domain.MCPServer, error) {
	s, err := scanMCPServer(q.QueryRowContext(ctx, `SELECT `+mcpColumns+` FROM mcp_servers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("MCP server")
	}
	return s, translate(err)
}

// ListMCPServers implements ports.MCPServerStore.
func (db *DB) ListMCPServers(ctx context.Context) ([]domain.MCPServer, error) {
	return collect(ctx, db.read, scanMCPServer, `SELECT `+mcpColumns+` FROM mcp_servers ORDER BY created_at DESC, id DESC`)
}

// FindMCPServer implements ports.MCPServerStore.
func (db *DB) FindMCPServer(ctx context.Context, id string) (domain.MCPServer, error) {
	return findMCPServer(ctx, db.read, id)
}

// InsertMCPServer implements ports.MCPServerStore.
func (db *DB) InsertMCPServer(ctx context.Context, s domain.MCPServer, admit func(owned int) error) error {
	config, err := json.Marshal(s.Config)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode an MCP server's config")
	}
	// Writers take turns (SQLite's one connection, Postgres's write lock),
	// so the count still holds at the insert.
	return db.tx(ctx, func(tx txQ) error {
		if admit != nil {
			var owned int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mcp_servers WHERE owner_id = ?`, s.OwnerID).Scan(&owned); err != nil {
				return translate(err)
			}
			if err := admit(owned); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_servers (`+mcpColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.OwnerID, string(s.Scope), s.Name, s.Enabled, string(config), s.SealedGrant, ms(s.CreatedAt), ms(s.UpdatedAt))
		return translate(err)
	})
}

// UpdateMCPServer implements ports.MCPServerStore.
func (db *DB) UpdateMCPServer(ctx context.Context, id string, change func(*domain.MCPServer) error) (domain.MCPServer, error) {
	var out domain.MCPServer
	err := db.tx(ctx, func(tx txQ) error {
		s, err := findMCPServer(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := change(&s); err != nil {
			return err
		}
		config, err := json.Marshal(s.Config)
		if err != nil {
			return errs.Wrap(errs.Internal, err, "encode an MCP server's config")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET name = ?, scope = ?, enabled = ?, config = ?, oauth_grant = ?, updated_at = ?
			WHERE id = ?`, s.Name, string(s.Scope), s.Enabled, string(config), s.SealedGrant, ms(s.UpdatedAt), id); err != nil {
			return translate(err)
		}
		out = s
		return nil
	})
	return out, err
}

// DeleteMCPServer implements ports.MCPServerStore.
func (db *DB) DeleteMCPServer(ctx context.Context, id string) error {
	r, err := db.exec(ctx, `DELETE FROM mcp_servers WHERE id = ?`, id)
	return affected(r, err, "MCP server")
}

// SaveMCPGrant implements ports.MCPServerStore.
func (db *DB) SaveMCPGrant(ctx context.Context, id, expect, sealed string) (bool, error) {
	r, err := db.exec(ctx, `UPDATE mcp_servers SET oauth_grant = ? WHERE id = ? AND oauth_grant = ?`, sealed, id, expect)
	if err != nil {
		return false, err
	}
	n, _ := r.RowsAffected()
	return n == 1, nil
}

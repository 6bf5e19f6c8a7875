package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// FindMCPPersonalGrant implements ports.MCPServerStore.
func (db *DB) FindMCPPersonalGrant(ctx context.Context, serverID, userID string) (string, error) {
	var sealed string
	err := db.read.QueryRowContext(ctx, `SELECT oauth_grant FROM mcp_personal_grants WHERE server_id = ? AND user_id = ?`,
		serverID, userID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sealed, translate(err)
}

// MCPPersonalGrantHolders implements ports.MCPServerStore.
func (db *DB) MCPPersonalGrantHolders(ctx context.Context, serverID string) ([]string, error) {
	return collect(ctx, db.read, scanString, `SELECT user_id FROM mcp_personal_grants WHERE server_id = ? ORDER BY user_id`, serverID)
}

// SaveMCPPersonalGrant implements ports.MCPServerStore: one statement per
// case, each conditioned on what is stored, so a refresh racing a sign-out
// or a new sign-in writes nothing.
func (db *DB) SaveMCPPersonalGrant(ctx context.Context, serverID, userID, expect, sealed string) (bool, error) {
	var r sql.Result
	var err error
	switch {
	case expect == "" && sealed == "":
		cur, err := db.FindMCPPersonalGrant(ctx, serverID, userID)
		return cur == "", err
	case expect == "":
		r, err = db.exec(ctx, `INSERT INTO mcp_personal_grants (server_id, user_id, oauth_grant) VALUES (?, ?, ?)
			ON CONFLICT (server_id, user_id) DO NOTHING`, serverID, userID, sealed)
	case sealed == "":
		r, err = db.exec(ctx, `DELETE FROM mcp_personal_grants WHERE server_id = ? AND user_id = ? AND oauth_grant = ?`,
			serverID, userID, expect)
	default:
		r, err = db.exec(ctx, `UPDATE mcp_personal_grants SET oauth_grant = ? WHERE server_id = ? AND user_id = ? AND oauth_grant = ?`,
			sealed, serverID, userID, expect)
	}
	if err != nil {
		return false, translate(err)
	}
	n, _ := r.RowsAffected()
	return n == 1, nil
}

// DeleteMCPPersonalGrants implements ports.MCPServerStore.
func (db *DB) DeleteMCPPersonalGrants(ctx context.Context, serverID, userID string) error {
	if userID == "" {
		_, err := db.exec(ctx, `DELETE FROM mcp_personal_grants WHERE server_id = ?`, serverID)
		return translate(err)
	}
	_, err := db.exec(ctx, `DELETE FROM mcp_personal_grants WHERE server_id = ? AND user_id = ?`, serverID, userID)
	return translate(err)
}

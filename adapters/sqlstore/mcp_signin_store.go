package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const mcpSignInColumns = `state, server_id, user_id, binding_hash, redirect_url, expires_at, delivered, code, iss, refusal`

func scanMCPSignIn(r rowScanner) (domain.MCPSignIn, error) {
	var in domain.MCPSignIn
	var expires int64
	var delivered bool
	var red domain.MCPRedirect
	if err := r.Scan(&in.State, &in.ServerID, &in.UserID, &in.BindingHash, &in.RedirectURL, &expires, &delivered,
		&red.SealedCode, &red.Iss, &red.Refusal); err != nil {
		return in, err
	}
	in.ExpiresAt = fromMS(expires)
	if delivered {
		in.Redirect = &red
	}
	return in, nil
}

// InsertMCPSignIn implements ports.MCPServerStore.
func (db *DB) InsertMCPSignIn(ctx context.Context, in domain.MCPSignIn, now time.Time) error {
	return db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_signins WHERE expires_at <= ?`, ms(now)); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mcp_signins (state, server_id, user_id, binding_hash, redirect_url, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, in.State, in.ServerID, in.UserID, in.BindingHash, in.RedirectURL, ms(in.ExpiresAt))
		return translate(err)
	})
}

// DeliverMCPSignIn implements ports.MCPServerStore: the check and the
// write share one transaction (writers take turns), so two callbacks on
// two replicas cannot both hand a code in.
func (db *DB) DeliverMCPSignIn(ctx context.Context, state string, r domain.MCPRedirect, now time.Time,
	check func(domain.MCPSignIn) error) (domain.MCPSignIn, error) {
	var in domain.MCPSignIn
	err := db.tx(ctx, func(tx txQ) error {
		var err error
		in, err = scanMCPSignIn(tx.QueryRowContext(ctx, `SELECT `+mcpSignInColumns+` FROM mcp_signins WHERE state = ?`, state))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !in.ExpiresAt.After(now)) {
			return notFound("sign-in")
		}
		if err != nil {
			return translate(err)
		}
		if err := check(in); err != nil {
			return err
		}
		if in.Redirect != nil {
			return errs.E(errs.Conflict, "the sign-in received its redirect already")
		}
		_, err = tx.ExecContext(ctx, `UPDATE mcp_signins SET delivered = 1, code = ?, iss = ?, refusal = ? WHERE state = ?`,
			r.SealedCode, r.Iss, r.Refusal, state)
		return translate(err)
	})
	if err != nil {
		return domain.MCPSignIn{}, err
	}
	return in, nil
}

// FindMCPSignIn implements ports.MCPServerStore.
func (db *DB) FindMCPSignIn(ctx context.Context, state string) (domain.MCPSignIn, error) {
	in, err := scanMCPSignIn(db.read.QueryRowContext(ctx, `SELECT `+mcpSignInColumns+` FROM mcp_signins WHERE state = ?`, state))
	if errors.Is(err, sql.ErrNoRows) {
		return in, notFound("sign-in")
	}
	return in, translate(err)
}

// DeleteMCPSignIn implements ports.MCPServerStore.
func (db *DB) DeleteMCPSignIn(ctx context.Context, state string) error {
	return db.tx(ctx, func(tx txQ) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM mcp_signins WHERE state = ?`, state)
		return translate(err)
	})
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// InsertOIDCAttempt implements ports.OIDCStore.
func (db *DB) InsertOIDCAttempt(ctx context.Context, a domain.OIDCAttempt, now time.Time) error {
	return db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oidc_attempts WHERE expires_at <= ?`, ms(now)); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO oidc_attempts (state, nonce, verifier, binding_hash, redirect_url, return_to, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, a.State, a.Nonce, a.Verifier, a.BindingHash, a.RedirectURL, a.ReturnTo, ms(a.ExpiresAt))
		return translate(err)
	})
}

// TakeOIDCAttempt implements ports.OIDCStore: the read and the delete
// share one write transaction, so two callbacks cannot both take it; an
// expired attempt is deleted too, and reads as absent.
func (db *DB) TakeOIDCAttempt(ctx context.Context, state string, now time.Time) (domain.OIDCAttempt, error) {
	var a domain.OIDCAttempt
	err := db.tx(ctx, func(tx txQ) error {
		var exp int64
		err := tx.QueryRowContext(ctx, `SELECT state, nonce, verifier, binding_hash, redirect_url, return_to, expires_at
			FROM oidc_attempts WHERE state = ?`, state).
			Scan(&a.State, &a.Nonce, &a.Verifier, &a.BindingHash, &a.RedirectURL, &a.ReturnTo, &exp)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("sign-in attempt")
		}
		if err != nil {
			return translate(err)
		}
		a.ExpiresAt = fromMS(exp)
		_, err = tx.ExecContext(ctx, `DELETE FROM oidc_attempts WHERE state = ?`, state)
		return translate(err)
	})
	if err != nil {
		return domain.OIDCAttempt{}, err
	}
	if !a.ExpiresAt.After(now) {
		return domain.OIDCAttempt{}, notFound("sign-in attempt")
	}
	return a, nil
}

// FindOIDCIdentity implements ports.OIDCStore.
func (db *DB) FindOIDCIdentity(ctx context.Context, issuer, subject string) (domain.OIDCIdentity, error) {
	var id domain.OIDCIdentity
	var created int64
	err := db.read.QueryRowContext(ctx, `SELECT issuer, subject, user_id, email, created_at FROM oidc_identities
		WHERE issuer = ? AND subject = ?`, issuer, subject).Scan(&id.Issuer, &id.Subject, &id.UserID, &id.Email, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return id, notFound("identity")
	}
	id.CreatedAt = fromMS(created)
	return id, translate(err)
}

// CreateOIDCIdentity implements ports.OIDCStore: a taken (issuer,
// subject) or a missing user is a conflict (the key, the foreign key).
func (db *DB) CreateOIDCIdentity(ctx context.Context, id domain.OIDCIdentity) error {
	return insertIdentity(ctx, db.writer(), id)
}

// CreateOIDCUser implements ports.OIDCStore: the account and its
// identity in one transaction.
func (db *DB) CreateOIDCUser(ctx context.Context, u domain.User, id domain.OIDCIdentity) error {
	return db.tx(ctx, func(tx txQ) error {
		if err := insertUser(ctx, tx, u); err != nil {
			return err
		}
		return insertIdentity(ctx, tx, id)
	})
}

func insertIdentity(ctx context.Context, q querier, id domain.OIDCIdentity) error {
	_, err := q.ExecContext(ctx, `INSERT INTO oidc_identities (issuer, subject, user_id, email, created_at) VALUES (?, ?, ?, ?, ?)`,
		id.Issuer, id.Subject, id.UserID, id.Email, ms(id.CreatedAt))
	return translate(err)
}

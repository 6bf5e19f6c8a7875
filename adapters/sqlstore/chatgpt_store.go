package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// InsertChatGPTLogin implements ports.ChatGPTStore.
func (db *DB) InsertChatGPTLogin(ctx context.Context, l domain.ChatGPTLogin, now time.Time) error {
	return db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chatgpt_logins WHERE expires_at <= ?`, ms(now)); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO chatgpt_logins (state, provider_id, user_id, verifier, expires_at) VALUES (?, ?, ?, ?, ?)`,
			l.State, l.ProviderID, l.UserID, l.SealedVerifier, ms(l.ExpiresAt))
		return translate(err)
	})
}

// TakeChatGPTLogin implements ports.ChatGPTStore: the row is deleted as it
// is read, so a callback URL redeems once — and only by the person who
// started it for the provider it names, so someone else's paste leaves it
// waiting for its owner.
func (db *DB) TakeChatGPTLogin(ctx context.Context, state, providerID, userID string, now time.Time) (domain.ChatGPTLogin, error) {
	l := domain.ChatGPTLogin{State: state, ProviderID: providerID, UserID: userID}
	err := db.tx(ctx, func(tx txQ) error {
		var expires int64
		err := tx.QueryRowContext(ctx, `DELETE FROM chatgpt_logins WHERE state = ? AND provider_id = ? AND user_id = ? RETURNING verifier, expires_at`,
			state, providerID, userID).Scan(&l.SealedVerifier, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			var one int
			err = tx.QueryRowContext(ctx, `SELECT 1 FROM chatgpt_logins WHERE state = ? AND expires_at > ?`, state, ms(now)).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return notFound("sign-in")
			}
			if err != nil {
				return translate(err)
			}
			return errs.E(errs.Forbidden, "the sign-in was started by another person or for another provider")
		}
		if err != nil {
			return translate(err)
		}
		l.ExpiresAt = fromMS(expires)
		if !l.ExpiresAt.After(now) {
			return notFound("sign-in")
		}
		return nil
	})
	return l, err
}

// SwapChatGPTToken implements ports.ChatGPTStore: one compare-and-swap
// UPDATE, so concurrent refreshes on several replicas cannot both win.
func (db *DB) SwapChatGPTToken(ctx context.Context, providerID, old, next string) (bool, error) {
	swapped := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE providers SET chatgpt_token = ? WHERE id = ? AND chatgpt_token = ? AND auth_mode = ?`,
			next, providerID, old, domain.AuthChatGPTLogin)
		if err != nil {
			return translate(err)
		}
		if n, _ := r.RowsAffected(); n > 0 {
			swapped = true
			return nil
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM providers WHERE id = ?`, providerID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("provider")
		}
		if err != nil {
			return translate(err)
		}
		return errUnchanged // a lost swap changed nothing: no audit record
	})
	if err == errUnchanged {
		err = nil
	}
	return swapped, err
}

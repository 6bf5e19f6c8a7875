package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

const tokenColumns = `t.id, t.user_id, t.kind, t.name, t.hash, t.hint, t.created_at, t.last_used_at, t.expires_at`

func scanToken(r rowScanner, extra ...any) (domain.Token, error) {
	var t domain.Token
	var kind string
	var created, used int64
	var exp sql.NullInt64
	dest := append([]any{&t.ID, &t.UserID, &kind, &t.Name, &t.Hash, &t.Hint, &created, &used, &exp}, extra...)
	if err := r.Scan(dest...); err != nil {
		return domain.Token{}, err
	}
	t.Kind = domain.TokenKind(kind)
	t.CreatedAt, t.LastUsedAt, t.ExpiresAt = fromMS(created), fromMS(used), fromNullMS(exp)
	return t, nil
}

func insertToken(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, t domain.Token) error {
	_, err := x.ExecContext(ctx, `INSERT INTO auth_tokens (id, user_id, kind, name, hash, hint, created_at, last_used_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.UserID, string(t.Kind), t.Name, t.Hash, t.Hint, ms(t.CreatedAt), ms(t.LastUsedAt), msPtr(t.ExpiresAt))
	return translate(err)
}

// CreateToken implements ports.TokenStore.
func (db *DB) CreateToken(ctx context.Context, t domain.Token) error {
	return insertToken(ctx, db.writer(), t)
}

// FindTokenByHash implements ports.TokenStore.
func (db *DB) FindTokenByHash(ctx context.Context, hash string) (domain.Token, domain.User, error) {
	return db.findToken(ctx, `t.hash = ?`, hash)
}

// FindTokenByID implements ports.TokenStore.
func (db *DB) FindTokenByID(ctx context.Context, id string) (domain.Token, domain.User, error) {
	return db.findToken(ctx, `t.id = ?`, id)
}

// findToken reads one token with its user; where is a constant condition
// on the token, never caller text.
func (db *DB) findToken(ctx context.Context, where, arg string) (domain.Token, domain.User, error) {
	var u domain.User
	var role string
	var uc, uu int64
	row := db.read.QueryRowContext(ctx, `SELECT `+tokenColumns+`,
		u.id, u.username, u.password_hash, u.role, u.disabled, u.bootstrap, u.created_at, u.updated_at
		FROM auth_tokens t JOIN users u ON u.id = t.user_id WHERE `+where, arg)
	t, err := scanToken(row, &u.ID, &u.Username, &u.PasswordHash, &role, &u.Disabled, &u.Bootstrap, &uc, &uu)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Token{}, domain.User{}, notFound("token")
	}
	if err != nil {
		return domain.Token{}, domain.User{}, translate(err)
	}
	u.Role = domain.Role(role)
	u.CreatedAt, u.UpdatedAt = fromMS(uc), fromMS(uu)
	return t, u, nil
}

// TouchToken implements ports.TokenStore.
func (db *DB) TouchToken(ctx context.Context, id string, usedAt time.Time, expiresAt *time.Time) error {
	_, err := db.exec(ctx, `UPDATE auth_tokens SET last_used_at = ?, expires_at = ? WHERE id = ?`, ms(usedAt), msPtr(expiresAt), id)
	return err
}

// ListTokens implements ports.TokenStore.
func (db *DB) ListTokens(ctx context.Context, userID string) ([]domain.Token, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM auth_tokens t WHERE t.user_id = ? ORDER BY t.id DESC`, userID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []domain.Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, t)
	}
	return out, translate(rows.Err())
}

// DeleteToken implements ports.TokenStore.
func (db *DB) DeleteToken(ctx context.Context, userID, id string) error {
	r, err := db.exec(ctx, `DELETE FROM auth_tokens WHERE id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return notFound("token")
	}
	return nil
}

// ReplaceStaticTokens implements ports.TokenStore.
func (db *DB) ReplaceStaticTokens(ctx context.Context, t domain.Token) error {
	return db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM auth_tokens WHERE user_id = ? AND kind = 'static' AND hash <> ?`, t.UserID, t.Hash); err != nil {
			return translate(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM auth_tokens WHERE hash = ?`, t.Hash).Scan(&n); err != nil {
			return translate(err)
		}
		if n > 0 {
			return nil
		}
		return insertToken(ctx, tx, t)
	})
}

// DeleteStaticTokens implements ports.TokenStore.
func (db *DB) DeleteStaticTokens(ctx context.Context, userID string) error {
	_, err := db.exec(ctx, `DELETE FROM auth_tokens WHERE user_id = ? AND kind = 'static'`, userID)
	return err
}

// DeleteExpiredTokens implements ports.TokenStore.
func (db *DB) DeleteExpiredTokens(ctx context.Context, now time.Time) (int, error) {
	r, err := db.exec(ctx, `DELETE FROM auth_tokens WHERE expires_at IS NOT NULL AND expires_at <= ?`, ms(now))
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

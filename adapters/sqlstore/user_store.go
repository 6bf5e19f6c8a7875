package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const userColumns = `id, username, password_hash, role, disabled, bootstrap, created_at, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

// queryRower is what *sql.DB and *sql.Tx share for single-row reads.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func scanUser(r rowScanner) (domain.User, error) {
	var u domain.User
	var role string
	var created, updated int64
	if err := r.Scan(&u.ID, &u.Username, &u.PasswordHash, &role, &u.Disabled, &u.Bootstrap, &created, &updated); err != nil {
		return domain.User{}, err
	}
	u.Role = domain.Role(role)
	u.CreatedAt, u.UpdatedAt = fromMS(created), fromMS(updated)
	return u, nil
}

// CreateUser implements ports.UserStore.
func (db *DB) CreateUser(ctx context.Context, u domain.User) error {
	return insertUser(ctx, db.writer(), u)
}

// insertUser inserts u with q (the writer, or a write transaction).
func insertUser(ctx context.Context, q querier, u domain.User) error {
	_, err := q.ExecContext(ctx, `INSERT INTO users (`+userColumns+`, username_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Username, u.PasswordHash, string(u.Role), u.Disabled, u.Bootstrap, ms(u.CreatedAt), ms(u.UpdatedAt),
		domain.UsernameKey(u.Username))
	err = translate(err)
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "username %q is taken", u.Username)
	}
	return err
}

func (db *DB) findUser(ctx context.Context, q queryRower, where string, arg any) (domain.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.User{}, notFound("user")
	}
	return u, translate(err)
}

// FindUserByID implements ports.UserStore.
func (db *DB) FindUserByID(ctx context.Context, id string) (domain.User, error) {
	return db.findUser(ctx, db.read, "id = ?", id)
}

// FindUserByUsername implements ports.UserStore: it matches on the
// username's key (domain.UsernameKey).
func (db *DB) FindUserByUsername(ctx context.Context, username string) (domain.User, error) {
	return db.findUser(ctx, db.read, "username_key = ?", domain.UsernameKey(username))
}

// FindBootstrapUser implements ports.UserStore.
func (db *DB) FindBootstrapUser(ctx context.Context) (domain.User, error) {
	return db.findUser(ctx, db.read, "bootstrap = ?", 1)
}

// ListUsers implements ports.UserStore.
func (db *DB) ListUsers(ctx context.Context) ([]domain.User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []domain.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, u)
	}
	return out, translate(rows.Err())
}

func otherActiveAdmins(ctx context.Context, tx txQ, id string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND disabled = 0 AND id <> ?`, id).Scan(&n)
	return n, translate(err)
}

// UpdateUser implements ports.UserStore.
func (db *DB) UpdateUser(ctx context.Context, id string, change func(u *domain.User, otherActiveAdmins int) error) (domain.User, error) {
	var out domain.User
	err := db.tx(ctx, func(tx txQ) error {
		before, err := db.findUser(ctx, tx, "id = ?", id)
		if err != nil {
			return err
		}
		others, err := otherActiveAdmins(ctx, tx, id)
		if err != nil {
			return err
		}
		after := before
		if err := change(&after, others); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, role = ?, disabled = ?, updated_at = ? WHERE id = ?`,
			after.PasswordHash, string(after.Role), after.Disabled, ms(after.UpdatedAt), id); err != nil {
			return translate(err)
		}
		if domain.RevokesTokens(before, after) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM auth_tokens WHERE user_id = ?`, id); err != nil {
				return translate(err)
			}
		}
		out = after
		return nil
	})
	return out, err
}

// DeleteUser implements ports.UserStore. Tokens go with the user (cascade).
func (db *DB) DeleteUser(ctx context.Context, id, heirID string, check func(u domain.User, otherActiveAdmins int) error) error {
	return db.tx(ctx, func(tx txQ) error {
		u, err := db.findUser(ctx, tx, "id = ?", id)
		if err != nil {
			return err
		}
		others, err := otherActiveAdmins(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := check(u, others); err != nil {
			return err
		}
		// Private rows can only be referenced by the same owner's private
		// rows, so they go together; global ones change hands.
		private := []string{"agents", "providers", "mcp_servers", "workflows", "skills"}
		for _, table := range private {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE owner_id = ? AND scope = 'private'`, id); err != nil {
				return translate(err)
			}
		}
		for _, table := range private {
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET owner_id = ? WHERE owner_id = ?`, heirID, id); err != nil {
				return translate(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id); err != nil {
			return translate(err)
		}
		return nil
	})
}

package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/core/domain"
)

// usernameKeysVersion is migration 00009, written in Go because the key is
// Unicode NFKC case folding (domain.UsernameKey), which SQL cannot compute.
const usernameKeysVersion = 9

// usernameKeysMigration gives every user the key that decides whether two
// usernames are one account, and makes it unique. Rows that fold together
// (only possible for non-ASCII names, as the column was already unique
// without ASCII case) keep signing in under the first; the later one gets
// a key no name produces and is logged for an admin to resolve.
func usernameKeysMigration(log *slog.Logger) *goose.Migration {
	up := func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE users ADD COLUMN username_key TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, username FROM users ORDER BY id`)
		if err != nil {
			return err
		}
		type user struct{ id, name string }
		var users []user
		for rows.Next() {
			var u user
			if err := rows.Scan(&u.id, &u.name); err != nil {
				rows.Close()
				return err
			}
			users = append(users, u)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		owner := map[string]string{}
		for _, u := range users {
			key := domain.UsernameKey(u.name)
			if first, taken := owner[key]; taken {
				log.Warn("two users' names are the same name once case and look-alike characters fold; "+
					"the later one can no longer sign in by name until it is deleted", "user_id", u.id, "username", u.name,
					"same_as_user_id", first)
				key = "#" + u.id // '#' is never in a username, so no name maps here
			}
			owner[key] = u.id
			if _, err := tx.ExecContext(ctx, `UPDATE users SET username_key = ? WHERE id = ?`, key, u.id); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `CREATE UNIQUE INDEX users_username_key ON users (username_key)`)
		return err
	}
	down := func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DROP INDEX users_username_key`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `ALTER TABLE users DROP COLUMN username_key`)
		return err
	}
	return goose.NewGoMigration(usernameKeysVersion, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}

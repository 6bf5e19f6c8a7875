package sqlstore

import (
	"context"
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// A query a transaction collects (a run's history, its entries' metadata:
// read in every run) is parsed once, not in every transaction: the rows
// are read to their end and closed before anything else runs, so the
// transaction may share the pool's prepared statement — here twice in a
// row with other arguments, each reading its own rows.
func TestCollectedQueriesInATransactionArePreparedOnce(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	for _, u := range []domain.User{user("ada", domain.RoleMember), user("bob", domain.RoleAdmin), user("cy", domain.RoleMember)} {
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	const query = `SELECT username FROM users WHERE role = ? ORDER BY username`
	read := func() (members, admins []string) {
		err := db.snapshot(ctx, func(tx txQ) (err error) {
			if members, err = collect(ctx, tx, scanString, query, string(domain.RoleMember)); err != nil {
				return err
			}
			admins, err = collect(ctx, tx, scanString, query, string(domain.RoleAdmin))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return members, admins
	}
	for i := range 2 {
		members, admins := read()
		if !slices.Equal(members, []string{"ada", "cy"}) || !slices.Equal(admins, []string{"bob"}) {
			t.Fatalf("read %d: members %v, admins %v", i, members, admins)
		}
		if db.read.stmts.cached(db.read.d.sql(query)) == nil {
			t.Fatalf("read %d: the collected query is not prepared for the next transaction", i)
		}
	}
}

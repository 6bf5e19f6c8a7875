package sqlstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openTemp opens an empty store on the engine the run chose (see
// pgtest.StoreEnv): the same tests are the contract of both engines.
func openTemp(t *testing.T) *DB {
	t.Helper()
	open := sqliteOpener(t, filepath.Join(t.TempDir(), FileName))
	if pgtest.OnPostgres() {
		url := pgtest.URL(t, "store suite on Postgres")
		open = func() (*DB, error) { return OpenPostgres(context.Background(), url, quiet) }
	}
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reopeners.Store(db, open)
	return db
}

// reopeners holds how each test store was opened, for reopen.
var reopeners sync.Map

// reopen closes db and opens its database again, as a restart does.
func reopen(t *testing.T, db *DB) *DB {
	t.Helper()
	open, ok := reopeners.Load(db)
	if !ok {
		t.Fatal("reopen takes a store openTemp opened")
	}
	db.Close()
	again, err := open.(func() (*DB, error))()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	reopeners.Store(again, open)
	return again
}

func sqliteOpener(t *testing.T, path string) func() (*DB, error) {
	return func() (*DB, error) { return Open(context.Background(), path, quiet) }
}

// openSQLite opens an empty SQLite store, for the tests of SQLite itself.
func openSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var seq int

func user(name string, role domain.Role) domain.User {
	seq++
	now := time.UnixMilli(1_700_000_000_000 + int64(seq)).UTC()
	return domain.User{ID: fmt.Sprintf("u%03d", seq), Username: name, Role: role, CreatedAt: now, UpdatedAt: now}
}

func TestOpenSetsPragmasAndMigrates(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	var mode string
	var fk, sync int
	db.read.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	db.read.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	db.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync)
	if mode != "wal" || fk != 1 || sync != 1 {
		t.Fatalf("journal_mode=%s foreign_keys=%d synchronous=%d", mode, fk, sync)
	}
	// The read pool cannot write.
	if _, err := db.read.ExecContext(ctx, "INSERT INTO server_meta VALUES ('x','y')"); err == nil {
		t.Fatal("the read pool accepted a write")
	}
}

func TestANewerSchemaRefusesToOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(context.Background(), path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), path, quiet)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("opened a newer schema: %v", err)
	}
	// Reopening an up-to-date database is fine and idempotent.
	path2 := filepath.Join(t.TempDir(), FileName)
	for i := 0; i < 2; i++ {
		db, err := Open(context.Background(), path2, quiet)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

func TestUsers(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	var s ports.UserStore = db
	admin := user("Root", domain.RoleAdmin)
	admin.Bootstrap = true
	if err := s.CreateUser(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, user("root", domain.RoleMember)); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("case-insensitive duplicate: %v", err)
	}
	dup := user("other", domain.RoleAdmin)
	dup.Bootstrap = true
	if err := s.CreateUser(ctx, dup); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a second bootstrap admin: %v", err)
	}
	got, err := s.FindUserByUsername(ctx, "ROOT")
	if err != nil || got.ID != admin.ID || !got.Bootstrap || !got.CreatedAt.Equal(admin.CreatedAt) {
		t.Fatalf("find by name = %+v %v", got, err)
	}
	if b, err := s.FindBootstrapUser(ctx); err != nil || b.ID != admin.ID {
		t.Fatalf("bootstrap = %+v %v", b, err)
	}
	if _, err := s.FindUserByID(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("missing user: %v", err)
	}
	m := user("mo", domain.RoleMember)
	s.CreateUser(ctx, m)
	list, _ := s.ListUsers(ctx)
	if len(list) != 2 || list[0].ID != admin.ID {
		t.Fatalf("list = %+v", list)
	}

	// The change sees the count of OTHER active admins.
	var seen int
	_, err = s.UpdateUser(ctx, m.ID, func(u *domain.User, others int) error {
		seen = others
		u.Role = domain.RoleAdmin
		return nil
	})
	if err != nil || seen != 1 {
		t.Fatalf("update: seen %d, %v", seen, err)
	}
	_, err = s.UpdateUser(ctx, admin.ID, func(u *domain.User, others int) error { seen = others; return nil })
	if err != nil || seen != 1 {
		t.Fatalf("admin sees %d other admins: %v", seen, err)
	}
	// A refused change writes nothing.
	_, err = s.UpdateUser(ctx, m.ID, func(u *domain.User, _ int) error {
		u.Role = domain.RoleMember
		return errs.E(errs.Conflict, "no")
	})
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatal(err)
	}
	if got, _ := s.FindUserByID(ctx, m.ID); got.Role != domain.RoleAdmin {
		t.Fatal("a refused change was written")
	}
	if _, err := s.UpdateUser(ctx, "nope", func(*domain.User, int) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("update missing: %v", err)
	}
	if err := s.DeleteUser(ctx, m.ID, admin.ID, func(domain.User, int) error { return errs.E(errs.Conflict, "no") }); errs.CodeOf(err) != errs.Conflict {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, m.ID, admin.ID, func(domain.User, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, m.ID, admin.ID, func(domain.User, int) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

// TestLastAdminRuleHoldsUnderConcurrency demotes two admins at once: the
// single writer and the in-transaction count let exactly one through.
func TestLastAdminRuleHoldsUnderConcurrency(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	a, b := user("a1", domain.RoleAdmin), user("a2", domain.RoleAdmin)
	db.CreateUser(ctx, a)
	db.CreateUser(ctx, b)
	demote := func(u *domain.User, others int) error {
		before := *u
		u.Role = domain.RoleMember
		return domain.CheckAdminRemains(before, u, others)
	}
	var wg sync.WaitGroup
	results := make([]error, 2)
	for i, id := range []string{a.ID, b.ID} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = db.UpdateUser(ctx, id, demote)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		if err == nil {
			ok++
		} else if errs.CodeOf(err) != errs.Conflict {
			t.Fatal(err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d demotions succeeded: %v", ok, results)
	}
}

func token(userID, hash string, kind domain.TokenKind, exp *time.Time) domain.Token {
	seq++
	now := time.UnixMilli(1_700_000_000_000).UTC()
	return domain.Token{ID: fmt.Sprintf("t%03d", seq), UserID: userID, Kind: kind, Hash: hash, Hint: "h", CreatedAt: now, LastUsedAt: now, ExpiresAt: exp}
}

func TestTokens(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	var s ports.TokenStore = db
	u := user("tok", domain.RoleMember)
	db.CreateUser(ctx, u)
	past, future := time.UnixMilli(1_600_000_000_000).UTC(), time.UnixMilli(1_900_000_000_000).UTC()

	t1 := token(u.ID, "hash1", domain.TokenSession, &future)
	if err := s.CreateToken(ctx, t1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(ctx, token(u.ID, "hash1", domain.TokenPersonal, nil)); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("duplicate hash: %v", err)
	}
	got, gu, err := s.FindTokenByHash(ctx, "hash1")
	if err != nil || got.ID != t1.ID || gu.ID != u.ID || got.ExpiresAt == nil || !got.ExpiresAt.Equal(future) {
		t.Fatalf("find = %+v %+v %v", got, gu, err)
	}
	if _, _, err := s.FindTokenByHash(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("missing: %v", err)
	}
	byID, bu, err := s.FindTokenByID(ctx, t1.ID)
	if err != nil || byID.Hash != "hash1" || bu.ID != u.ID || bu.Username != u.Username || bu.Role != u.Role {
		t.Fatalf("find by id = %+v %+v %v", byID, bu, err)
	}
	if _, _, err := s.FindTokenByID(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("missing by id: %v", err)
	}
	used := time.UnixMilli(1_800_000_000_000).UTC()
	if err := s.TouchToken(ctx, t1.ID, used, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.FindTokenByHash(ctx, "hash1"); !got.LastUsedAt.Equal(used) || got.ExpiresAt != nil {
		t.Fatalf("touch = %+v", got)
	}

	expired := token(u.ID, "hash2", domain.TokenPersonal, &past)
	s.CreateToken(ctx, expired)
	if n, err := s.DeleteExpiredTokens(ctx, time.UnixMilli(1_700_000_000_000)); err != nil || n != 1 {
		t.Fatalf("pruned %d: %v", n, err)
	}
	if err := s.DeleteToken(ctx, "someone-else", t1.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("foreign delete: %v", err)
	}

	st := token(u.ID, "static1", domain.TokenStatic, nil)
	s.ReplaceStaticTokens(ctx, st)
	s.ReplaceStaticTokens(ctx, token(u.ID, "static1", domain.TokenStatic, nil)) // same hash: kept
	s.ReplaceStaticTokens(ctx, token(u.ID, "static2", domain.TokenStatic, nil))
	if _, _, err := s.FindTokenByHash(ctx, "static1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatal("a replaced static token still authenticates")
	}
	list, _ := s.ListTokens(ctx, u.ID)
	if len(list) != 2 {
		t.Fatalf("list = %+v", list)
	}
	s.DeleteStaticTokens(ctx, u.ID)
	if list, _ := s.ListTokens(ctx, u.ID); len(list) != 1 || list[0].ID != t1.ID {
		t.Fatalf("after static delete = %+v", list)
	}

	// Disabling revokes tokens in the same transaction; deleting cascades.
	db.UpdateUser(ctx, u.ID, func(x *domain.User, _ int) error { x.Disabled = true; return nil })
	if list, _ := s.ListTokens(ctx, u.ID); len(list) != 0 {
		t.Fatalf("disabled user kept %d tokens", len(list))
	}
	s.CreateToken(ctx, token(u.ID, "hash3", domain.TokenPersonal, nil))
	db.DeleteUser(ctx, u.ID, "", func(domain.User, int) error { return nil })
	if _, _, err := s.FindTokenByHash(ctx, "hash3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatal("a deleted user's token survived")
	}
}

package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Tokens is the contract of ports.TokenStore beside the users it names:
// hashes unique (conflict), a token found by hash or id with its user,
// not_found otherwise, a touch that writes the use and expiry, listings
// newest (largest id) first, a delete only of the user's own token, one
// static token per user (a hash already stored anywhere is kept, not
// added), expiry pruned at or before now to the millisecond, and times
// kept as UTC milliseconds. s.Tokens must not be nil; s must hold no
// users.
func Tokens(t *testing.T, s UserStores) {
	ctx := context.Background()
	tokens := s.Tokens
	for _, u := range []domain.User{
		{ID: "u1", Username: "ann", Role: domain.RoleMember, CreatedAt: userEpoch, UpdatedAt: userEpoch},
		{ID: "u2", Username: "bob", Role: domain.RoleAdmin, CreatedAt: userEpoch, UpdatedAt: userEpoch},
	} {
		if err := s.Users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	ptr := func(x time.Time) *time.Time { return &x }
	token := func(id, userID, hash string, kind domain.TokenKind, exp *time.Time) domain.Token {
		return domain.Token{ID: id, UserID: userID, Kind: kind, Name: "n-" + id, Hash: hash, Hint: "h-" + id,
			CreatedAt: userEpoch, LastUsedAt: userEpoch, ExpiresAt: exp}
	}
	create := func(tk domain.Token) error {
		t.Helper()
		return tokens.CreateToken(ctx, tk)
	}
	ids := func(userID string) []string {
		t.Helper()
		list, err := tokens.ListTokens(ctx, userID)
		if err != nil || list == nil {
			t.Fatalf("%s's tokens = %#v, %v; want a non-nil list", userID, list, err)
		}
		out := []string{}
		for _, tk := range list {
			out = append(out, tk.ID)
		}
		return out
	}
	if got := ids("u1"); len(got) != 0 {
		t.Fatalf("no tokens yet, listed %v", got)
	}

	// Round trip, by hash and by id, with the token's user.
	exp := userEpoch.Add(time.Hour)
	k1 := token("k1", "u1", "hash1", domain.TokenSession, &exp)
	if err := create(k1); err != nil {
		t.Fatal(err)
	}
	want := k1
	want.CreatedAt, want.LastUsedAt, want.ExpiresAt = storedAt(userEpoch), storedAt(userEpoch), ptr(storedAt(exp))
	owner, err := s.Users.FindUserByID(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	got, gotUser, err := tokens.FindTokenByHash(ctx, "hash1")
	if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotUser, owner) {
		t.Fatalf("by hash = %+v, %+v, %v\nwant %+v, %+v", got, gotUser, err, want, owner)
	}
	got, gotUser, err = tokens.FindTokenByID(ctx, "k1")
	if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotUser, owner) {
		t.Fatalf("by id = %+v, %+v, %v", got, gotUser, err)
	}
	if _, _, err := tokens.FindTokenByHash(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an unknown hash: %v, want not_found", err)
	}
	if _, _, err := tokens.FindTokenByID(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an unknown id: %v, want not_found", err)
	}
	if err := create(token("k9", "u2", "hash1", domain.TokenPersonal, nil)); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken hash, another user's: %v, want conflict", err)
	}

	// A touch writes the use and the expiry, a nil expiry included; a
	// touch of a token gone is no error.
	used := userEpoch.Add(30 * time.Minute)
	if err := tokens.TouchToken(ctx, "k1", used, ptr(used.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := tokens.FindTokenByID(ctx, "k1"); !got.LastUsedAt.Equal(storedAt(used)) || got.ExpiresAt == nil ||
		!got.ExpiresAt.Equal(storedAt(used.Add(time.Hour))) || got.LastUsedAt.Location() != time.UTC {
		t.Fatalf("after a touch = %+v", got)
	}
	if err := tokens.TouchToken(ctx, "k1", used, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := tokens.FindTokenByID(ctx, "k1"); got.ExpiresAt != nil {
		t.Fatalf("a touch to no expiry kept %v", got.ExpiresAt)
	}
	if err := tokens.TouchToken(ctx, "nope", used, nil); err != nil {
		t.Fatalf("touching a token gone: %v", err)
	}

	// Listings and deletes are per user.
	for _, tk := range []domain.Token{token("k3", "u1", "hash3", domain.TokenPersonal, nil), token("k2", "u1", "hash2", domain.TokenLaunch, nil),
		token("k4", "u2", "hash4", domain.TokenPersonal, nil)} {
		if err := create(tk); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids("u1"); !reflect.DeepEqual(got, []string{"k3", "k2", "k1"}) {
		t.Fatalf("u1's tokens, newest first = %v", got)
	}
	if err := tokens.DeleteToken(ctx, "u2", "k3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting another user's token: %v, want not_found", err)
	}
	if err := tokens.DeleteToken(ctx, "u1", "k3"); err != nil {
		t.Fatal(err)
	}
	if err := tokens.DeleteToken(ctx, "u1", "k3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting twice: %v, want not_found", err)
	}

	// One static token per user; a hash stored already is kept as it is.
	static := func(id, userID, hash string) {
		t.Helper()
		if err := tokens.ReplaceStaticTokens(ctx, token(id, userID, hash, domain.TokenStatic, nil)); err != nil {
			t.Fatal(err)
		}
	}
	static("s1", "u1", "static1")
	static("s2", "u1", "static1") // the same hash: s1 stays
	if got, _, err := tokens.FindTokenByHash(ctx, "static1"); err != nil || got.ID != "s1" {
		t.Fatalf("the static token after the same hash again = %+v, %v; want s1 kept", got, err)
	}
	static("s3", "u1", "static3")
	static("s4", "u2", "static4")
	if _, _, err := tokens.FindTokenByHash(ctx, "static1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a replaced static token: %v, want not_found", err)
	}
	if got := ids("u1"); !reflect.DeepEqual(got, []string{"s3", "k2", "k1"}) {
		t.Fatalf("u1's tokens after the static swap = %v", got)
	}
	if err := tokens.DeleteStaticTokens(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if got := ids("u1"); !reflect.DeepEqual(got, []string{"k2", "k1"}) {
		t.Fatalf("u1's tokens without static ones = %v", got)
	}
	if got := ids("u2"); !reflect.DeepEqual(got, []string{"s4", "k4"}) {
		t.Fatalf("deleting u1's static tokens reached u2's: %v", got)
	}

	// Expiry: at or before now goes, to the stored millisecond.
	at := storedAt(userEpoch).Add(2*time.Hour + 200*time.Microsecond)
	for _, tk := range []domain.Token{
		token("e1", "u2", "e1", domain.TokenSession, ptr(at.Add(-time.Minute))),
		token("e2", "u2", "e2", domain.TokenSession, ptr(at.Add(300*time.Microsecond))), // the same millisecond as now
		token("e3", "u2", "e3", domain.TokenSession, ptr(at.Add(time.Millisecond))),
	} {
		if err := create(tk); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tokens.DeleteExpiredTokens(ctx, at); err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want e1 and e2", n, err)
	}
	if got := ids("u2"); !reflect.DeepEqual(got, []string{"s4", "k4", "e3"}) {
		t.Fatalf("after pruning = %v", got)
	}
}

package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ChatGPTSignIns is the contract of ports.ChatGPTStore beside the
// ports.ConfigStore holding the providers: a provider's sign-in is written
// only by compare-and-swap (an insert or update of the row never sets it,
// and a provider that stops signing in with ChatGPT loses it), and a
// waiting sign-in is taken once, only by the person who started it for its
// provider, and never once expired. cfg must hold no providers; owner must
// be a user who may own them.
func ChatGPTSignIns(t *testing.T, cfg ports.ConfigStore, s ports.ChatGPTStore, owner string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	own := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: owner}
	gpt := domain.Provider{ID: "gpt", Ownership: own, Name: "ChatGPT", Type: "openai", AuthMode: domain.AuthChatGPTLogin,
		API: "responses", SealedChatGPTToken: "forged", CreatedAt: now, UpdatedAt: now}
	keyed := domain.Provider{ID: "keyed", Ownership: own, Name: "Keyed", Type: "openai", AuthMode: domain.AuthAPIKey,
		API: "responses", CreatedAt: now, UpdatedAt: now}
	write := func(fn func(tx ports.ConfigTx) error) {
		t.Helper()
		if err := cfg.InConfigTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	token := func(id string) string {
		t.Helper()
		p, err := cfg.FindProvider(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p.SealedChatGPTToken
	}
	write(func(tx ports.ConfigTx) error { return tx.InsertProvider(ctx, gpt) })
	write(func(tx ports.ConfigTx) error { return tx.InsertProvider(ctx, keyed) })
	if got := token("gpt"); got != "" {
		t.Fatalf("an inserted provider holds the sign-in %q; only a swap writes one", got)
	}

	// The swap: only from the value it holds, only on a chatgpt_login row.
	swap := func(id, old, next string, want bool) {
		t.Helper()
		if ok, err := s.SwapChatGPTToken(ctx, id, old, next); err != nil || ok != want {
			t.Fatalf("swap %s %q → %q: %v, %v; want %v", id, old, next, ok, err, want)
		}
	}
	swap("gpt", "", "t1", true)
	swap("gpt", "", "t2", false) // a stale old value: another writer moved first
	swap("keyed", "", "t1", false)
	if got := token("gpt"); got != "t1" {
		t.Fatalf("the sign-in after the swaps: %q, want t1", got)
	}
	if _, err := s.SwapChatGPTToken(ctx, "gone", "", "t1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a swap on a missing provider: %v, want not_found", err)
	}
	// An update of the row keeps the sign-in whatever it carries, until
	// the provider stops signing in with ChatGPT.
	gpt.Name, gpt.SealedChatGPTToken = "ChatGPT renamed", "forged"
	write(func(tx ports.ConfigTx) error { return tx.UpdateProvider(ctx, gpt) })
	if got := token("gpt"); got != "t1" {
		t.Fatalf("an update wrote the sign-in: %q, want t1", got)
	}
	gpt.AuthMode = domain.AuthAPIKey
	write(func(tx ports.ConfigTx) error { return tx.UpdateProvider(ctx, gpt) })
	gpt.AuthMode = domain.AuthChatGPTLogin
	write(func(tx ports.ConfigTx) error { return tx.UpdateProvider(ctx, gpt) })
	if got := token("gpt"); got != "" {
		t.Fatalf("a provider that left chatgpt_login kept its sign-in %q", got)
	}

	// Waiting sign-ins.
	login := domain.ChatGPTLogin{State: "s1", ProviderID: "gpt", UserID: owner, SealedVerifier: "v1", ExpiresAt: now.Add(10 * time.Minute)}
	if err := s.InsertChatGPTLogin(ctx, login, now); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertChatGPTLogin(ctx, login, now); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a state waiting twice: %v, want conflict", err)
	}
	take := func(state, provider, user string, at time.Time, want errs.Code) domain.ChatGPTLogin {
		t.Helper()
		l, err := s.TakeChatGPTLogin(ctx, state, provider, user, at)
		if errs.CodeOf(err) != want && !(want == "" && err == nil) {
			t.Fatalf("take %s for %s by %s: %v, want %q", state, provider, user, err, want)
		}
		return l
	}
	take("s1", "gpt", "someone-else", now, errs.Forbidden)
	take("s1", "keyed", owner, now, errs.Forbidden)
	got := take("s1", "gpt", owner, now.Add(time.Minute), "")
	if got.State != "s1" || got.ProviderID != "gpt" || got.UserID != owner || got.SealedVerifier != "v1" || !got.ExpiresAt.Equal(login.ExpiresAt) {
		t.Fatalf("took %+v, want %+v", got, login)
	}
	take("s1", "gpt", owner, now.Add(time.Minute), errs.NotFound) // used once
	take("never", "gpt", owner, now, errs.NotFound)

	// An expired sign-in is no one's: not the owner's, and no refusal
	// tells another it exists; a new insert drops it, freeing its state.
	short := domain.ChatGPTLogin{State: "s2", ProviderID: "gpt", UserID: owner, SealedVerifier: "v2", ExpiresAt: now.Add(time.Minute)}
	if err := s.InsertChatGPTLogin(ctx, short, now); err != nil {
		t.Fatal(err)
	}
	take("s2", "gpt", owner, now.Add(time.Minute), errs.NotFound)
	take("s2", "gpt", "someone-else", now.Add(2*time.Minute), errs.NotFound)
	short.ExpiresAt = now.Add(time.Hour)
	if err := s.InsertChatGPTLogin(ctx, short, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("a state whose sign-in expired is used again: %v", err)
	}

	// A provider's sign-ins go with it.
	if err := s.InsertChatGPTLogin(ctx, domain.ChatGPTLogin{State: "s3", ProviderID: "keyed", UserID: owner, SealedVerifier: "v3",
		ExpiresAt: now.Add(time.Hour)}, now); err != nil {
		t.Fatal(err)
	}
	write(func(tx ports.ConfigTx) error { return tx.DeleteProvider(ctx, "keyed") })
	take("s3", "keyed", owner, now, errs.NotFound)
	if err := s.InsertChatGPTLogin(ctx, domain.ChatGPTLogin{State: "s4", ProviderID: "keyed", UserID: owner, SealedVerifier: "v4",
		ExpiresAt: now.Add(time.Hour)}, now); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a sign-in for a missing provider: %v, want conflict", err)
	}
}

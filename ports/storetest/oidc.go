package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// OIDCStores are the stores the single sign-on contract runs against: an
// identity refers to a user.
type OIDCStores struct {
	Users ports.UserStore
	OIDC  ports.OIDCStore
}

// OIDC is the contract of ports.OIDCStore: an attempt is taken once and
// never once expired (and an expired one is dropped); an identity is
// linked once, only to a user that exists, and goes with its user. s must
// hold no user named "sso-ann" or "sso-bob".
func OIDC(t *testing.T, s OIDCStores) {
	ctx := context.Background()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

	a := domain.OIDCAttempt{State: "state-1", Nonce: "nonce-1", Verifier: "verifier-1", BindingHash: "hash-1",
		RedirectURL: "https://agents.example/api/v1/auth/oidc/callback", ReturnTo: "/s/1", ExpiresAt: now.Add(domain.OIDCAttemptTTL)}
	if err := s.OIDC.InsertOIDCAttempt(ctx, a, now); err != nil {
		t.Fatal(err)
	}
	if err := s.OIDC.InsertOIDCAttempt(ctx, a, now); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a state stored twice: %v, want conflict", err)
	}
	got, err := s.OIDC.TakeOIDCAttempt(ctx, "state-1", now.Add(time.Minute))
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("took %+v, %v; want %+v", got, err, a)
	}
	if _, err := s.OIDC.TakeOIDCAttempt(ctx, "state-1", now.Add(time.Minute)); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an attempt taken twice: %v, want not_found", err)
	}
	if _, err := s.OIDC.TakeOIDCAttempt(ctx, "never", now); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a state never stored: %v, want not_found", err)
	}
	old := a
	old.State = "state-old"
	if err := s.OIDC.InsertOIDCAttempt(ctx, old, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OIDC.TakeOIDCAttempt(ctx, "state-old", a.ExpiresAt); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an attempt at its expiry: %v, want not_found", err)
	}
	// An expired attempt is dropped by the next insert: its state is free.
	late := old
	late.State, late.ExpiresAt = "state-late", now.Add(time.Minute)
	if err := s.OIDC.InsertOIDCAttempt(ctx, late, now); err != nil {
		t.Fatal(err)
	}
	again := late
	again.ExpiresAt = now.Add(time.Hour)
	if err := s.OIDC.InsertOIDCAttempt(ctx, again, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("a state whose attempt expired, stored again: %v", err)
	}

	ann := domain.User{ID: "sso-ann-id", Username: "sso-ann", Role: domain.RoleMember, CreatedAt: now, UpdatedAt: now}
	bob := domain.User{ID: "sso-bob-id", Username: "sso-bob", Role: domain.RoleMember, CreatedAt: now, UpdatedAt: now}
	for _, u := range []domain.User{ann, bob} {
		if err := s.Users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	id := domain.OIDCIdentity{Issuer: "https://idp.example", Subject: "sub-ann", UserID: ann.ID, Email: "ann@example.com", CreatedAt: now}
	if err := s.OIDC.CreateOIDCIdentity(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got, err := s.OIDC.FindOIDCIdentity(ctx, id.Issuer, id.Subject); err != nil || !reflect.DeepEqual(got, id) {
		t.Fatalf("found %+v, %v; want %+v", got, err, id)
	}
	taken := id
	taken.UserID = bob.ID
	if err := s.OIDC.CreateOIDCIdentity(ctx, taken); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("an identity linked twice: %v, want conflict", err)
	}
	orphan := id
	orphan.Subject, orphan.UserID = "sub-nobody", "no-such-user"
	if err := s.OIDC.CreateOIDCIdentity(ctx, orphan); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("an identity of a missing user: %v, want conflict", err)
	}
	// An account made with its identity: both, or neither.
	cy := domain.User{ID: "sso-cy-id", Username: "sso-cy", Role: domain.RoleMember, CreatedAt: now, UpdatedAt: now}
	cyID := domain.OIDCIdentity{Issuer: id.Issuer, Subject: "sub-cy", UserID: cy.ID, CreatedAt: now}
	if err := s.OIDC.CreateOIDCUser(ctx, cy, cyID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.OIDC.FindOIDCIdentity(ctx, cyID.Issuer, cyID.Subject); err != nil || got.UserID != cy.ID {
		t.Fatalf("the new account's identity: %+v, %v", got, err)
	}
	if _, err := s.Users.FindUserByID(ctx, cy.ID); err != nil {
		t.Fatalf("the new account: %v", err)
	}
	twin := domain.User{ID: "sso-twin-id", Username: "sso-twin", Role: domain.RoleMember, CreatedAt: now, UpdatedAt: now}
	twinID := cyID
	twinID.UserID = twin.ID
	if err := s.OIDC.CreateOIDCUser(ctx, twin, twinID); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("an account for an identity linked already: %v, want conflict", err)
	}
	if _, err := s.Users.FindUserByID(ctx, twin.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the refused account was kept: %v", err)
	}
	namesake := domain.User{ID: "sso-namesake-id", Username: "SSO-Cy", Role: domain.RoleMember, CreatedAt: now, UpdatedAt: now}
	namesakeID := domain.OIDCIdentity{Issuer: id.Issuer, Subject: "sub-namesake", UserID: namesake.ID, CreatedAt: now}
	if err := s.OIDC.CreateOIDCUser(ctx, namesake, namesakeID); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("an account with a taken username: %v, want conflict", err)
	}
	if _, err := s.OIDC.FindOIDCIdentity(ctx, namesakeID.Issuer, namesakeID.Subject); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the refused account's identity was kept: %v", err)
	}
	other := id
	other.Issuer = "https://other-idp.example"
	if _, err := s.OIDC.FindOIDCIdentity(ctx, other.Issuer, other.Subject); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the same subject at another issuer: %v, want not_found", err)
	}
	if err := s.Users.DeleteUser(ctx, ann.ID, bob.ID, func(domain.User, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OIDC.FindOIDCIdentity(ctx, id.Issuer, id.Subject); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an identity after its user was deleted: %v, want not_found", err)
	}
}

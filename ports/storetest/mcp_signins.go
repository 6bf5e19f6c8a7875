package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// MCPSignIns is the contract of the waiting MCP OAuth sign-ins of
// ports.MCPServerStore: a sign-in waits under its state for its server, is
// handed its redirect once and only past its check (a refused check writes
// nothing), never once expired, and goes with its server. s must hold no
// MCP servers; owner must be a user who may own them.
func MCPSignIns(t *testing.T, s ports.MCPServerStore, owner string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	srv := domain.MCPServer{ID: "signin-srv", Name: "signin-srv", Enabled: true, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: owner},
		Config: domain.MCPConfig{Endpoint: "https://mcp.example/signin", AuthMode: domain.MCPAuthOAuth}, CreatedAt: now, UpdatedAt: now}
	if err := s.InsertMCPServer(ctx, srv, nil); err != nil {
		t.Fatal(err)
	}
	waiting := domain.MCPSignIn{State: "st-1", ServerID: srv.ID, UserID: owner, BindingHash: "hash-1",
		RedirectURL: "https://app.example/cb", ExpiresAt: now.Add(5 * time.Minute)}
	if err := s.InsertMCPSignIn(ctx, waiting, now); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertMCPSignIn(ctx, waiting, now); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a state waiting twice: %v, want conflict", err)
	}
	missing := waiting
	missing.State, missing.ServerID = "st-x", "no-such-server"
	if err := s.InsertMCPSignIn(ctx, missing, now); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a sign-in for a missing server: %v, want conflict", err)
	}
	find := func(state string) domain.MCPSignIn {
		t.Helper()
		in, err := s.FindMCPSignIn(ctx, state)
		if err != nil {
			t.Fatalf("find %s: %v", state, err)
		}
		return in
	}
	if got := find("st-1"); !reflect.DeepEqual(got, waiting) {
		t.Fatalf("found %+v, want %+v", got, waiting)
	}
	if _, err := s.FindMCPSignIn(ctx, "never"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("find a state never issued: %v, want not_found", err)
	}

	deliver := func(state string, r domain.MCPRedirect, at time.Time, check func(domain.MCPSignIn) error, want errs.Code) domain.MCPSignIn {
		t.Helper()
		if check == nil {
			check = func(domain.MCPSignIn) error { return nil }
		}
		in, err := s.DeliverMCPSignIn(ctx, state, r, at, check)
		if errs.CodeOf(err) != want && !(want == "" && err == nil) {
			t.Fatalf("deliver %s: %v, want %q", state, err, want)
		}
		return in
	}
	// A refused check writes nothing and its error comes back as is.
	refusal := errs.E(errs.Forbidden, "not yours")
	var told domain.MCPSignIn
	if _, err := s.DeliverMCPSignIn(ctx, "st-1", domain.MCPRedirect{SealedCode: "stolen"}, now, func(in domain.MCPSignIn) error {
		told = in
		return refusal
	}); !errors.Is(err, refusal) {
		t.Fatalf("a refused check: %v, want its own error", err)
	}
	if !reflect.DeepEqual(told, waiting) {
		t.Fatalf("the check was told %+v, want %+v", told, waiting)
	}
	if got := find("st-1"); got.Redirect != nil {
		t.Fatalf("a refused delivery wrote %+v", got.Redirect)
	}
	// Delivered once: the code is kept for the replica that waits.
	red := domain.MCPRedirect{SealedCode: "enc:code", Iss: "https://as.example"}
	if got := deliver("st-1", red, now.Add(time.Minute), nil, ""); !reflect.DeepEqual(got, waiting) {
		t.Fatalf("delivery returned %+v, want the waiting sign-in %+v", got, waiting)
	}
	if got := find("st-1"); got.Redirect == nil || *got.Redirect != red {
		t.Fatalf("after the delivery the sign-in holds %+v, want %+v", got.Redirect, red)
	}
	deliver("st-1", domain.MCPRedirect{SealedCode: "enc:again"}, now.Add(time.Minute), nil, errs.Conflict)
	if got := find("st-1"); *got.Redirect != red {
		t.Fatalf("a second delivery replaced the redirect: %+v", got.Redirect)
	}
	// A refusal is a redirect too.
	refused := waiting
	refused.State = "st-2"
	if err := s.InsertMCPSignIn(ctx, refused, now); err != nil {
		t.Fatal(err)
	}
	deliver("st-2", domain.MCPRedirect{Refusal: "access_denied: no"}, now, nil, "")
	if got := find("st-2"); got.Redirect == nil || got.Redirect.Refusal != "access_denied: no" || got.Redirect.SealedCode != "" {
		t.Fatalf("a refused sign-in holds %+v", got.Redirect)
	}
	if err := s.DeleteMCPSignIn(ctx, "st-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMCPSignIn(ctx, "st-2"); err != nil {
		t.Fatalf("deleting an ended sign-in again: %v", err)
	}
	deliver("st-2", domain.MCPRedirect{SealedCode: "c"}, now, nil, errs.NotFound)
	deliver("never", domain.MCPRedirect{SealedCode: "c"}, now, nil, errs.NotFound)

	// Expired: nobody delivers, not even a check is run; a new insert
	// drops it and frees its state.
	short := waiting
	short.State, short.ExpiresAt = "st-3", now.Add(time.Minute)
	if err := s.InsertMCPSignIn(ctx, short, now); err != nil {
		t.Fatal(err)
	}
	deliver("st-3", domain.MCPRedirect{SealedCode: "c"}, now.Add(time.Minute), func(domain.MCPSignIn) error {
		t.Fatal("the check ran for an expired sign-in")
		return nil
	}, errs.NotFound)
	short.ExpiresAt = now.Add(time.Hour)
	if err := s.InsertMCPSignIn(ctx, short, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("a state whose sign-in expired is used again: %v", err)
	}

	// A server's sign-ins go with it.
	if err := s.DeleteMCPServer(ctx, srv.ID); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"st-1", "st-3"} {
		if _, err := s.FindMCPSignIn(ctx, state); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("sign-in %s of a deleted server: %v, want not_found", state, err)
		}
	}
}

package mcp_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

func TestVisibilityAndPermissions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	shared := h.create(admin, domain.ScopeGlobal, headerInput("shared"))
	mine := h.create(alice, "", headerInput("alice-own"))
	theirs := h.create(bob, domain.ScopePrivate, headerInput("bob-own"))
	if mine.Scope != domain.ScopePrivate || mine.OwnerID != alice.User.ID {
		t.Fatalf("a create without scope = %+v, want private to its author", mine.Ownership)
	}

	names := func(p domain.Principal) []string {
		list, err := h.svc.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		return out
	}
	for _, tc := range []struct {
		who  domain.Principal
		want []string
	}{
		{alice, []string{"shared", "alice-own"}}, // others' shared rows first, then their own
		{bob, []string{"shared", "bob-own"}},
		{admin, []string{"bob-own", "alice-own", "shared"}}, // one flat list, newest first
	} {
		if got := names(tc.who); !slices.Equal(got, tc.want) {
			t.Errorf("List as %s = %v, want %v", tc.who.User.ID, got, tc.want)
		}
	}

	in := func(name string) mcp.Input { return headerInput(name) }
	for _, tc := range []struct {
		name string
		op   func() error
		want errs.Code
	}{
		{"member reads another's private", func() error { _, err := h.svc.Get(ctx, alice, theirs.ID); return err }, errs.NotFound},
		{"member updates another's private", func() error { _, err := h.svc.Update(ctx, alice, theirs.ID, in("bob-own")); return err }, errs.NotFound},
		{"member deletes another's private", func() error { return h.svc.Delete(ctx, alice, theirs.ID) }, errs.NotFound},
		{"member connects another's private", func() error { _, err := h.svc.Connect(ctx, alice, theirs.ID, callbackURL); return err }, errs.NotFound},
		{"member clears another's grant", func() error { _, err := h.svc.ClearGrant(ctx, alice, theirs.ID); return err }, errs.NotFound},
		{"member updates a global row", func() error { _, err := h.svc.Update(ctx, alice, shared.ID, in("shared")); return err }, errs.Forbidden},
		{"member deletes a global row", func() error { return h.svc.Delete(ctx, alice, shared.ID) }, errs.Forbidden},
		{"member creates a global row", func() error { _, err := h.svc.Create(ctx, alice, domain.ScopeGlobal, in("x")); return err }, errs.Forbidden},
		{"admin edits a member's private row", func() error { _, err := h.svc.Update(ctx, admin, mine.ID, in("alice-own")); return err }, errs.Forbidden},
		{"unknown scope", func() error { _, err := h.svc.Create(ctx, alice, "team", in("x")); return err }, errs.Validation},
		{"missing row", func() error { _, err := h.svc.Get(ctx, admin, "nope"); return err }, errs.NotFound},
	} {
		before := h.rows()
		wantCode(t, tc.name, tc.op(), tc.want)
		if after := h.rows(); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: a refused call changed the rows", tc.name)
		}
	}

	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"member reads a global row", func() error { _, err := h.svc.Get(ctx, alice, shared.ID); return err }},
		{"admin reads a member's private row", func() error { _, err := h.svc.Get(ctx, admin, mine.ID); return err }},
		{"owner updates own row", func() error { _, err := h.svc.Update(ctx, alice, mine.ID, in("alice-renamed")); return err }},
		{"admin updates a global row", func() error { _, err := h.svc.Update(ctx, admin, shared.ID, in("shared")); return err }},
		{"admin deletes a member's private row", func() error { return h.svc.Delete(ctx, admin, theirs.ID) }},
	} {
		if err := tc.op(); err != nil {
			t.Errorf("%s = %v, want allowed", tc.name, err)
		}
	}
	if got := names(admin); !slices.Equal(got, []string{"alice-renamed", "shared"}) {
		t.Errorf("after the writes the rows are %v", got)
	}
}

func TestNamesAreUniqueAcrossOwners(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(alice, domain.ScopePrivate, headerInput("GitHub"))
	before := h.rows()
	_, err := h.svc.Create(t.Context(), bob, domain.ScopePrivate, headerInput("github"))
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.MessageOf(err), `"github" already exists`) {
		t.Errorf("create with another owner's name (case aside) = %v, want a conflict naming it", err)
	}
	if after := h.rows(); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused create stored a row: %+v", after)
	}
}

func TestValidationRefusesAndChangesNothing(t *testing.T) {
	t.Parallel()
	with := func(f func(*mcp.Input)) mcp.Input {
		in := headerInput("valid")
		f(&in)
		return in
	}
	for _, tc := range []struct {
		name  string
		in    mcp.Input
		field string // the field (or field prefix) the error names
	}{
		{"empty name", with(func(in *mcp.Input) { in.Name = "" }), "name"},
		{"separator in name", with(func(in *mcp.Input) { in.Name = "a__b" }), "name"},
		{"leading underscore", with(func(in *mcp.Input) { in.Name = "_a" }), "name"},
		{"trailing underscore", with(func(in *mcp.Input) { in.Name = "a_" }), "name"},
		{"space in name", with(func(in *mcp.Input) { in.Name = "a b" }), "name"},
		{"name too long", with(func(in *mcp.Input) { in.Name = strings.Repeat("a", mcp.MaxName+1) }), "name"},
		{"empty endpoint", with(func(in *mcp.Input) { in.Config.Endpoint = "" }), "config.endpoint"},
		{"ftp endpoint", with(func(in *mcp.Input) { in.Config.Endpoint = "ftp://mcp.example/x" }), "config.endpoint"},
		{"endpoint without host", with(func(in *mcp.Input) { in.Config.Endpoint = "https:///mcp" }), "config.endpoint"},
		{"relative endpoint", with(func(in *mcp.Input) { in.Config.Endpoint = "/mcp" }), "config.endpoint"},
		{"endpoint with fragment", with(func(in *mcp.Input) { in.Config.Endpoint = "https://mcp.example/x#top" }), "config.endpoint"},
		{"endpoint with credentials", with(func(in *mcp.Input) { in.Config.Endpoint = "https://u:p@mcp.example/x" }), "config.endpoint"},
		{"reserved header", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"Host": "evil"} }), "config.headers.Host"},
		{"reserved header, other case", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"mcp-session-id": "x"} }), "config.headers.mcp-session-id"},
		{"header twice, case aside", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"X-Key": "a", "x-key": "b"} }), "config.headers."},
		{"bad header name", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"X Key": "a"} }), "config.headers.X Key"},
		{"header value with newline", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"X-Key": "a\r\nX-Evil: 1"} }), "config.headers.X-Key"},
		{"mask without a stored value", with(func(in *mcp.Input) { in.Config.Headers = map[string]string{"X-Key": secrets.Mask} }), "config.headers.X-Key"},
		{"unknown auth mode", with(func(in *mcp.Input) { in.Config.AuthMode = "basic" }), "config.auth_mode"},
		{"oauth client id with header auth", with(func(in *mcp.Input) { in.Config.OAuthClientID = "cid" }), "config.auth_mode"},
		{"oauth scopes with header auth", with(func(in *mcp.Input) { in.Config.OAuthScopes = []string{"read"} }), "config.auth_mode"},
		{"client secret without client id", with(func(in *mcp.Input) {
			in.Config.AuthMode, in.Config.OAuthClientSecret = domain.MCPAuthOAuth, "shh"
		}), "config.oauth_client_secret"},
		{"scope with a space", with(func(in *mcp.Input) {
			in.Config.AuthMode, in.Config.OAuthScopes = domain.MCPAuthOAuth, []string{"read", "read write"}
		}), "config.oauth_scopes[1]"},
		{"empty scope", with(func(in *mcp.Input) {
			in.Config.AuthMode, in.Config.OAuthScopes = domain.MCPAuthOAuth, []string{""}
		}), "config.oauth_scopes[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := t.Context()
			_, err := h.svc.Create(ctx, alice, domain.ScopePrivate, tc.in)
			checkFieldError(t, "create", err, tc.field)
			if rows := h.rows(); len(rows) != 0 {
				t.Errorf("a refused create stored %+v", rows)
			}

			stored := h.create(alice, domain.ScopePrivate, mcp.Input{Name: "stored", Config: domain.MCPConfig{
				Endpoint: "https://stored.example/mcp", Headers: map[string]string{"X-Key": "kept"}}})
			before := h.rows()
			_, err = h.svc.Update(ctx, alice, stored.ID, tc.in)
			checkFieldError(t, "update", err, tc.field)
			if after := h.rows(); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused update changed the row:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

func checkFieldError(t *testing.T, op string, err error, field string) {
	t.Helper()
	if !errs.Is(err, errs.Validation) {
		t.Fatalf("%s = %v, want validation", op, err)
	}
	for f := range errs.FieldsOf(err) {
		if f == field || (strings.HasSuffix(field, ".") && strings.HasPrefix(f, field)) {
			return
		}
	}
	t.Errorf("%s: fields %v, want one named %q", op, errs.FieldsOf(err), field)
}

func TestSecretsAreSealedMaskedAndKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	e := h.endpoint("vault", "read")
	in := oauthInput("vault")
	in.Config.Headers = map[string]string{"x-api-key": "header-secret", "X-Tenant": "acme"}
	in.Config.OAuthClientID, in.Config.OAuthClientSecret = "client-1", "client-secret"
	created := h.create(alice, domain.ScopePrivate, in)

	row := h.row(created.ID)
	for name, stored := range map[string]string{
		"header X-Api-Key": row.Config.Headers["X-Api-Key"], // canonical name
		"header X-Tenant":  row.Config.Headers["X-Tenant"],
		"client secret":    row.Config.OAuthClientSecret,
	} {
		if stored == "" || strings.Contains(stored, "secret") || strings.Contains(stored, "acme") || !strings.HasPrefix(stored, "enc:") {
			t.Errorf("%s stored as %q, want it sealed", name, stored)
		}
	}
	for _, view := range []mcp.Server{created, h.get(created.ID)} {
		want := map[string]string{"X-Api-Key": secrets.Mask, "X-Tenant": secrets.Mask}
		if !reflect.DeepEqual(view.Config.Headers, want) || view.Config.OAuthClientSecret != secrets.Mask {
			t.Errorf("read = headers %v, secret %q; want every secret masked", view.Config.Headers, view.Config.OAuthClientSecret)
		}
		if view.SealedGrant != "" {
			t.Errorf("a read carries the sealed grant %q", view.SealedGrant)
		}
	}
	eventually(t, "the server is dialed", func() bool { return len(e.Targets()) > 0 })
	target := e.Targets()[0]
	if target.Headers["X-Api-Key"] != "header-secret" || target.Headers["X-Tenant"] != "acme" {
		t.Errorf("dialed with headers %v, want them opened", target.Headers)
	}
	if target.OAuth == nil || target.OAuth.ClientID != "client-1" || target.OAuth.ClientSecret != "client-secret" {
		t.Errorf("dialed with OAuth %+v, want the client opened", target.OAuth)
	}

	// The mask keeps a stored value, "" drops a header, a new value replaces.
	in.Config.Headers = map[string]string{"X-API-KEY": secrets.Mask, "X-Tenant": "", "X-New": "fresh"}
	in.Config.OAuthClientSecret = secrets.Mask
	if _, err := h.svc.Update(ctx, alice, created.ID, in); err != nil {
		t.Fatal(err)
	}
	after := h.row(created.ID)
	if after.Config.Headers["X-Api-Key"] != row.Config.Headers["X-Api-Key"] || after.Config.OAuthClientSecret != row.Config.OAuthClientSecret {
		t.Errorf("the mask did not keep the stored values: %+v", after.Config)
	}
	if _, ok := after.Config.Headers["X-Tenant"]; ok || len(after.Config.Headers) != 2 || after.Config.Headers["X-New"] == "fresh" {
		t.Errorf("headers after update = %v, want X-Api-Key kept, X-Tenant dropped, X-New sealed", after.Config.Headers)
	}

	// A moved endpoint takes no stored secret along.
	for _, tc := range []struct {
		name  string
		edit  func(*mcp.Input)
		field string
	}{
		{"header mask after an endpoint change", func(in *mcp.Input) {
			in.Config.Endpoint = "https://elsewhere.example/mcp"
			in.Config.OAuthClientSecret = "new-secret"
		}, "config.headers.X-API-KEY"},
		{"secret mask after an endpoint change", func(in *mcp.Input) {
			in.Config.Endpoint = "https://elsewhere.example/mcp"
			in.Config.Headers = map[string]string{}
		}, "config.oauth_client_secret"},
		{"secret mask after a client change", func(in *mcp.Input) {
			in.Config.OAuthClientID = "client-2"
		}, "config.oauth_client_secret"},
	} {
		next := in
		next.Config.Headers = map[string]string{"X-API-KEY": secrets.Mask}
		tc.edit(&next)
		before := h.rows()
		_, err := h.svc.Update(ctx, alice, created.ID, next)
		checkFieldError(t, tc.name, err, tc.field)
		if rows := h.rows(); !reflect.DeepEqual(before, rows) {
			t.Errorf("%s: the refused update changed the row", tc.name)
		}
	}
}

func TestPlaintextBoxStoresAsIs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	box, _ := secrets.NewBox(nil)
	h.box = box
	h.svc = h.newService()
	in := headerInput("plain")
	in.Config.Headers = map[string]string{"X-Key": "visible"}
	s := h.create(alice, domain.ScopePrivate, in)
	if got := h.row(s.ID).Config.Headers["X-Key"]; got != "visible" {
		t.Errorf("without a key the header is stored as %q, want the plaintext", got)
	}
	if s.Config.Headers["X-Key"] != secrets.Mask {
		t.Errorf("without a key a read still masks: got %q", s.Config.Headers["X-Key"])
	}
}

func TestChangesThatDropTheGrant(t *testing.T) {
	t.Parallel()
	base := oauthInput("drive")
	base.Config.OAuthClientID = "client-1"
	for _, tc := range []struct {
		name string
		edit func(*mcp.Input)
		drop bool
	}{
		{"endpoint", func(in *mcp.Input) { in.Config.Endpoint = "https://moved.example/mcp" }, true},
		{"auth mode", func(in *mcp.Input) {
			in.Config.AuthMode, in.Config.OAuthClientID = domain.MCPAuthHeader, ""
		}, true},
		{"client id", func(in *mcp.Input) { in.Config.OAuthClientID = "client-2" }, true},
		{"name and headers only", func(in *mcp.Input) {
			in.Name, in.Config.Headers = "drive2", map[string]string{"X-Other": "v"}
		}, false},
		{"disabled", func(in *mcp.Input) { in.Enabled = ptr(false) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			s := h.create(alice, domain.ScopePrivate, base)
			h.seedGrant(s.ID, domain.MCPGrant{AccessToken: "at", TokenURL: "https://as.example/token", ClientID: "client-1"})
			if !h.get(s.ID).HasOAuthToken {
				t.Fatal("the seeded grant is not reported")
			}
			in := base
			tc.edit(&in)
			got, err := h.svc.Update(t.Context(), alice, s.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			stored := h.row(s.ID)
			if (stored.SealedGrant == "") != tc.drop || got.HasOAuthToken == tc.drop {
				t.Errorf("after the update grant stored %v, reported %v; want dropped = %v", stored.SealedGrant != "", got.HasOAuthToken, tc.drop)
			}
			if stored.Config.Endpoint != in.Config.Endpoint || stored.Name != in.Name {
				t.Errorf("the update's fields were not stored with it: %+v", stored)
			}
		})
	}
}

func TestDeleteRefusedWhileAgentsSelectTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.create(alice, domain.ScopePrivate, headerInput("GitHub"))
	h.addAgent("agent-1", "Reviewer", domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}, "read_file", "github__search")
	h.addAgent("agent-2", "Other", domain.Ownership{Scope: domain.ScopePrivate, OwnerID: bob.User.ID}, "gitlab__search")

	err := h.svc.Delete(t.Context(), alice, s.ID)
	wantCode(t, "delete while selected", err, errs.Conflict)
	if msg := errs.MessageOf(err); !strings.Contains(msg, "Reviewer") || strings.Contains(msg, "Other") {
		t.Errorf("message %q, want it to name the selecting agent only", msg)
	}
	if _, err := h.store.FindMCPServer(t.Context(), s.ID); err != nil {
		t.Errorf("the refused delete removed the row: %v", err)
	}

	// Edits that keep the name stay allowed.
	in := headerInput("GitHub")
	in.Enabled = ptr(false)
	if _, err := h.svc.Update(t.Context(), alice, s.ID, in); err != nil {
		t.Errorf("an update keeping the name = %v, want allowed", err)
	}
	other := h.create(alice, domain.ScopePrivate, headerInput("unused"))
	if err := h.svc.Delete(t.Context(), alice, other.ID); err != nil {
		t.Errorf("deleting an unselected server = %v", err)
	}
}

func TestRenameRefusedWhileAgentsSelectTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := h.create(alice, domain.ScopePrivate, headerInput("GitHub"))
	h.addAgent("agent-1", "Reviewer", domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}, "github__search")
	before := h.rows()
	_, err := h.svc.Update(t.Context(), alice, s.ID, headerInput("gh"))
	// The server's name is free; what blocks the rename is the agent — a
	// conflict of state, not a field the person typed wrong.
	wantCode(t, "rename while selected", err, errs.Conflict)
	if msg := errs.MessageOf(err); !strings.Contains(msg, "Reviewer") {
		t.Errorf("message %q, want it to name the selecting agent", msg)
	}
	if after := h.rows(); !reflect.DeepEqual(before, after) {
		t.Errorf("the refused rename changed the row")
	}
}

func TestScopeChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := h.create(alice, domain.ScopePrivate, headerInput("tools"))
	// Only an admin publishes.
	_, err := h.svc.SetScope(t.Context(), alice, srv.ID, domain.ScopeGlobal)
	wantCode(t, "a member publishing", err, errs.Forbidden)
	got, err := h.svc.SetScope(t.Context(), admin, srv.ID, domain.ScopeGlobal)
	if err != nil || got.Scope != domain.ScopeGlobal || h.row(srv.ID).Scope != domain.ScopeGlobal {
		t.Fatalf("publish = %+v, %v", got.Scope, err)
	}
	// Bob's agent now selects its tools: unpublishing would strand it.
	h.addAgent("a-bob", "Bob's", domain.Ownership{Scope: domain.ScopePrivate, OwnerID: bob.User.ID}, "tools__x")
	_, err = h.svc.SetScope(t.Context(), alice, srv.ID, domain.ScopePrivate)
	wantCode(t, "unpublishing a server another's agent uses", err, errs.Conflict)
	if !strings.Contains(errs.MessageOf(err), "Bob's") || h.row(srv.ID).Scope != domain.ScopeGlobal {
		t.Fatalf("refused unpublish: %v, scope %s", err, h.row(srv.ID).Scope)
	}
	// Alice's own private agent would keep it: her unpublish goes through once Bob's is gone.
	h.addAgent("a-alice", "Alice's", domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}, "tools__x")
	if err := h.config.InConfigTx(t.Context(), func(tx ports.ConfigTx) error { return tx.DeleteAgent(t.Context(), "a-bob") }); err != nil {
		t.Fatal(err)
	}
	if got, err := h.svc.SetScope(t.Context(), alice, srv.ID, domain.ScopePrivate); err != nil || got.Scope != domain.ScopePrivate {
		t.Fatalf("unpublish = %+v, %v", got.Scope, err)
	}
	_, err = h.svc.SetScope(t.Context(), bob, srv.ID, domain.ScopeGlobal)
	wantCode(t, "a stranger", err, errs.NotFound)
}

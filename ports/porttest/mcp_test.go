package porttest_test

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func mcpRow(id, name, owner string, at time.Time) domain.MCPServer {
	return domain.MCPServer{ID: id, Name: name, Enabled: true,
		Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: owner},
		Config:    domain.MCPConfig{Endpoint: "https://mcp.example/" + id, Headers: map[string]string{"X-Key": "v"}, AuthMode: domain.MCPAuthHeader},
		CreatedAt: at, UpdatedAt: at}
}

func TestMCPStoreNamesAreUniqueAcrossOwners(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var s porttest.MCPStore
	at := time.Date(2025, 1, 2, 3, 4, 5, 678901234, time.Local)
	if err := s.InsertMCPServer(ctx, mcpRow("a", "GitHub", "u1", at), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		row  domain.MCPServer
	}{
		{"same name, another owner, other case", mcpRow("b", "github", "u2", at)},
		{"same id", mcpRow("a", "other", "u1", at)},
	} {
		if err := s.InsertMCPServer(ctx, tc.row, nil); !errs.Is(err, errs.Conflict) {
			t.Errorf("%s: insert = %v, want conflict", tc.name, err)
		}
	}
	if err := s.InsertMCPServer(ctx, mcpRow("b", "gitlab", "u2", at.Add(time.Second)), nil); err != nil {
		t.Fatal(err)
	}
	rows, err := s.ListMCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].ID != "b" || rows[1].ID != "a" {
		t.Fatalf("list = %+v, want b then a (newest first)", rows)
	}
	if got, want := rows[1].CreatedAt, at.UTC().Truncate(time.Millisecond); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("created_at = %v, want %v in UTC (milliseconds, as stored)", got, want)
	}

	before, _ := s.ListMCPServers(ctx)
	_, err = s.UpdateMCPServer(ctx, "b", func(r *domain.MCPServer) error {
		r.Name, r.Enabled = "GITHUB", false
		return nil
	})
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("rename onto a taken name = %v, want conflict", err)
	}
	if after, _ := s.ListMCPServers(ctx); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused rename changed the rows:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error { r.Name = "GITHUB"; return nil }); err != nil {
		t.Errorf("a row's own name in another case = %v, want accepted", err)
	}
}

func TestMCPStoreUpdateIsOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var s porttest.MCPStore
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.InsertMCPServer(ctx, mcpRow("a", "one", "u1", at), nil); err != nil {
		t.Fatal(err)
	}
	before, _ := s.FindMCPServer(ctx, "a")
	boom := errors.New("boom")
	_, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error {
		r.Name, r.SealedGrant = "two", "grant"
		r.Config.Headers["X-Key"] = "changed"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update = %v, want the change's error", err)
	}
	if after, _ := s.FindMCPServer(ctx, "a"); !reflect.DeepEqual(before, after) {
		t.Errorf("a failed change was stored:\nbefore %+v\nafter  %+v", before, after)
	}

	got, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error {
		r.Name, r.SealedGrant, r.UpdatedAt = "two", "grant", at.Add(time.Hour)
		r.OwnerID, r.Scope, r.CreatedAt = "u2", domain.ScopeGlobal, at.Add(time.Hour)
		return nil
	})
	if err != nil || got.Name != "two" {
		t.Fatalf("update = %+v, %v", got, err)
	}
	stored, _ := s.FindMCPServer(ctx, "a")
	if stored.Name != "two" || stored.SealedGrant != "grant" || !stored.UpdatedAt.Equal(at.Add(time.Hour)) || stored.Scope != domain.ScopeGlobal {
		t.Errorf("stored = %+v, want the change's name, scope, grant and update time", stored)
	}
	if stored.OwnerID != "u1" || !stored.CreatedAt.Equal(at) {
		t.Errorf("stored = %+v, want owner and creation time unchanged", stored)
	}
	stored.Config.Headers["X-Key"] = "mutated by a reader"
	if again, _ := s.FindMCPServer(ctx, "a"); again.Config.Headers["X-Key"] != "v" {
		t.Errorf("a reader's change reached the store: %q", again.Config.Headers["X-Key"])
	}

	for name, err := range map[string]error{
		"update": func() error {
			_, err := s.UpdateMCPServer(ctx, "nope", func(*domain.MCPServer) error { return nil })
			return err
		}(),
		"delete": s.DeleteMCPServer(ctx, "nope"),
		"find": func() error {
			_, err := s.FindMCPServer(ctx, "nope")
			return err
		}(),
	} {
		if !errs.Is(err, errs.NotFound) {
			t.Errorf("%s of a missing row = %v, want not_found", name, err)
		}
	}
}

func TestMCPStoreSaveGrantComparesAndSets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var s porttest.MCPStore
	if err := s.InsertMCPServer(ctx, mcpRow("a", "one", "u1", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		expect, sealed string
		wrote          bool
		stored         string
	}{
		{"", "g1", true, "g1"},
		{"", "g2", false, "g1"}, // a sign-in that read no grant loses to g1
		{"g1", "g2", true, "g2"},
		{"g1", "g3", false, "g2"}, // a refresh of a replaced grant
		{"g2", "", true, ""},      // clear
		{"g2", "g4", false, ""},   // an old refresh after a clear
	}
	for i, st := range steps {
		wrote, err := s.SaveMCPGrant(ctx, "a", st.expect, st.sealed)
		if err != nil || wrote != st.wrote {
			t.Fatalf("step %d: SaveMCPGrant(%q→%q) = %v, %v; want %v", i, st.expect, st.sealed, wrote, err, st.wrote)
		}
		if r, _ := s.FindMCPServer(ctx, "a"); r.SealedGrant != st.stored {
			t.Fatalf("step %d: stored grant %q, want %q", i, r.SealedGrant, st.stored)
		}
	}
	if wrote, err := s.SaveMCPGrant(ctx, "missing", "", "g"); wrote || err != nil {
		t.Errorf("SaveMCPGrant on a missing row = %v, %v; want false, nil", wrote, err)
	}
}

func TestMCPDialerSignsInThroughAuthorize(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var d porttest.MCPDialer
	e := d.Endpoint("https://mcp.example/x")
	e.SetTools(ports.MCPTool{Name: "echo"})

	var saved []domain.MCPGrant
	var issued string
	o := &ports.MCPOAuth{RedirectURL: "https://app.example/cb", Scopes: []string{"read"},
		SaveGrant: func(g domain.MCPGrant) error { saved = append(saved, g); return nil }}
	target := ports.MCPTarget{Endpoint: "https://mcp.example/x", OAuth: o}

	if _, err := d.Dial(ctx, target); kindOf(err) != ports.MCPNeedsAuth {
		t.Fatalf("dial without grant or Authorize = %v, want needs_auth", err)
	}
	o.Authorize = func(_ context.Context, u string) (ports.MCPAuthorization, error) {
		issued = u
		q, _ := url.Parse(u)
		return ports.MCPAuthorization{Code: "c1", State: q.Query().Get("state")}, nil
	}
	sess, err := d.Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(issued)
	if u.Query().Get("state") == "" || u.Query().Get("redirect_uri") != "https://app.example/cb" {
		t.Errorf("authorize URL %q lacks state or redirect_uri", issued)
	}
	if len(saved) != 1 || saved[0].AccessToken != "access-c1" {
		t.Errorf("saved grants = %+v, want one for code c1", saved)
	}
	res, err := sess.CallTool(ctx, "echo", []byte(`{"a":1}`))
	if err != nil || res.Content[0].Text != `{"a":1}` {
		t.Errorf("call = %+v, %v", res, err)
	}
	e.Kill(errors.New("reset"))
	<-sess.Done()
	if sess.Err() == nil || kindOf(func() error { _, err := sess.CallTool(ctx, "echo", nil); return err }()) != ports.MCPUnreachable {
		t.Errorf("a killed session: err %v, calls should fail unreachable", sess.Err())
	}

	o.Authorize = func(context.Context, string) (ports.MCPAuthorization, error) {
		return ports.MCPAuthorization{Code: "c2", State: "forged"}, nil
	}
	if _, err := d.Dial(ctx, target); kindOf(err) != ports.MCPAuthFailed {
		t.Errorf("dial with a forged state = %v, want auth_failed", err)
	}
	if _, err := d.Dial(ctx, ports.MCPTarget{Endpoint: "https://elsewhere.example"}); kindOf(err) != ports.MCPUnreachable {
		t.Errorf("dial of an unscripted endpoint = %v, want unreachable", err)
	}
}

func kindOf(err error) ports.MCPErrorKind {
	var me *ports.MCPError
	if errors.As(err, &me) {
		return me.Kind
	}
	return ""
}

// admit is told how many rows the new row's owner has, and its refusal
// stores nothing, as the SQL store does.
func TestMCPStoreInsertAdmitsByTheOwnersCount(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var s porttest.MCPStore
	at := time.Now()
	full := errs.E(errs.Conflict, "full")
	capAt := func(limit int, seen *int) func(int) error {
		return func(owned int) error {
			*seen = owned
			if owned >= limit {
				return full
			}
			return nil
		}
	}
	var seen int
	for i, id := range []string{"a", "b"} {
		if err := s.InsertMCPServer(ctx, mcpRow(id, "n-"+id, "u1", at), capAt(2, &seen)); err != nil || seen != i {
			t.Fatalf("insert %s: %v (owner had %d)", id, err, seen)
		}
	}
	if err := s.InsertMCPServer(ctx, mcpRow("c", "n-c", "u1", at), capAt(2, &seen)); !errors.Is(err, full) || seen != 2 {
		t.Fatalf("past the cap: %v (owner had %d)", err, seen)
	}
	if _, err := s.FindMCPServer(ctx, "c"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a refused row was stored: %v", err)
	}
	if err := s.InsertMCPServer(ctx, mcpRow("d", "n-d", "u2", at), capAt(2, &seen)); err != nil || seen != 0 {
		t.Fatalf("another owner: %v (had %d)", err, seen)
	}
}

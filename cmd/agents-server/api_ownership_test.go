package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// TestOwnershipMatrixOverTheAPI drives the scope rules through both scoped
// entities: every actor against every kind of row, for read, list, update,
// delete, publish and unpublish.
func TestOwnershipMatrixOverTheAPI(t *testing.T) {
	t.Parallel()
	for _, entity := range []string{"providers", "agents"} {
		t.Run(entity, func(t *testing.T) {
			t.Parallel()
			ownershipMatrix(t, entity)
		})
	}
}

func ownershipMatrix(t *testing.T, entity string) {
	h := startServer(t, testConfig(t))
	tokens := map[string]string{"member": h.member("mona"), "other": h.member("ned"), "admin": h.admin}
	base := "/api/v1/" + entity
	n := 0
	body := func() map[string]any {
		n++
		name := fmt.Sprintf("row-%d", n)
		if entity == "agents" {
			return map[string]any{"name": name, "model": "gpt-5.2"}
		}
		return map[string]any{"name": name}
	}
	// newRow creates a row of the given kind, publishing it through an admin.
	newRow := func(owner, scope string) string {
		var row struct{ ID string }
		h.call("POST", base, tokens[owner], body()).want(t, 201).decode(t, &row)
		if scope == "global" {
			h.call("POST", base+"/"+row.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)
		}
		return row.ID
	}
	const ok, hidden, forbidden, already = 200, 404, 403, 409
	type want struct{ read, update, delete, publish, unpublish int }
	matrix := map[string]map[string]want{
		"member": {
			"member-private": {ok, ok, ok, forbidden, already},
			"member-global":  {ok, ok, ok, already, ok},
			"admin-private":  {hidden, hidden, hidden, hidden, hidden},
			"admin-global":   {ok, forbidden, forbidden, already, forbidden},
		},
		"other": {
			"member-private": {hidden, hidden, hidden, hidden, hidden},
			"member-global":  {ok, forbidden, forbidden, already, forbidden},
			"admin-private":  {hidden, hidden, hidden, hidden, hidden},
			"admin-global":   {ok, forbidden, forbidden, already, forbidden},
		},
		"admin": {
			"member-private": {ok, forbidden, ok, ok, already},
			"member-global":  {ok, ok, ok, already, ok},
			"admin-private":  {ok, ok, ok, ok, already},
			"admin-global":   {ok, ok, ok, already, ok},
		},
	}
	for actor, rows := range matrix {
		for kind, w := range rows {
			owner, scope, _ := strings.Cut(kind, "-")
			tok := tokens[actor]
			check := func(op string, r reply, status int) {
				t.Helper()
				if status == ok && op == "delete" {
					status = 204
				}
				if r.Status != status {
					t.Errorf("%s %s on %s: %d, want %d: %s", actor, op, kind, r.Status, status, r.Body)
				}
			}
			id := newRow(owner, scope)
			check("read", h.call("GET", base+"/"+id, tok, nil), w.read)
			var list []struct{ ID string }
			h.call("GET", base, tok, nil).want(t, 200).decode(t, &list)
			listed := false
			for _, r := range list {
				listed = listed || r.ID == id
			}
			if listed != (w.read == ok) {
				t.Errorf("%s lists %s: %v", actor, kind, listed)
			}
			upd := body()
			check("update", h.call("PUT", base+"/"+id, tok, upd), w.update)
			check("publish", h.call("POST", base+"/"+id+"/scope", tok, map[string]string{"scope": "global"}), w.publish)
			id = newRow(owner, scope)
			check("unpublish", h.call("POST", base+"/"+id+"/scope", tok, map[string]string{"scope": "private"}), w.unpublish)
			id = newRow(owner, scope)
			check("delete", h.call("DELETE", base+"/"+id, tok, nil), w.delete)
		}
	}
	// Creating a global row is admin-only.
	g := body()
	g["scope"] = "global"
	h.call("POST", base, tokens["member"], g).wantErr(t, 403, "forbidden")
	var row struct{ Scope string }
	h.call("POST", base, h.admin, g).want(t, 201).decode(t, &row)
	if row.Scope != "global" {
		t.Fatalf("admin global create = %q", row.Scope)
	}
}

func TestNamesAreUniquePerScopeDomain(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	mona, ned := h.member("mona"), h.member("ned")
	a := h.createProvider(mona, map[string]any{"name": "shared-name"})
	h.createProvider(ned, map[string]any{"name": "shared-name"}) // another owner's private namespace
	h.call("POST", "/api/v1/providers", mona, map[string]any{"name": "Shared-Name"}).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/providers/"+a.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)
	// A second global of that name cannot be published.
	var list []httpapi.ProviderView
	h.call("GET", "/api/v1/providers", ned, nil).want(t, 200).decode(t, &list)
	var neds string
	for _, p := range list {
		if p.OwnerID != a.OwnerID {
			neds = p.ID
		}
	}
	h.call("POST", "/api/v1/providers/"+neds+"/scope", h.admin, map[string]string{"scope": "global"}).wantErr(t, 409, "conflict")
	// Mona can have a private one of that name again, beside the global.
	h.createProvider(mona, map[string]any{"name": "shared-name"})
}

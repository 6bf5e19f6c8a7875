package domain

import (
	"fmt"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

// TestOwnershipMatrix is the whole access matrix of scoped configuration:
// actor × row × operation, with the answer each must get.
func TestOwnershipMatrix(t *testing.T) {
	member := Principal{User: User{ID: "m", Role: RoleMember}}
	other := Principal{User: User{ID: "n", Role: RoleMember}}
	admin := Principal{User: User{ID: "a", Role: RoleAdmin}}
	actors := map[string]Principal{"member": member, "other": other, "admin": admin}
	rows := map[string]Ownership{
		"member-private": {ScopePrivate, "m"},
		"member-global":  {ScopeGlobal, "m"},
		"admin-private":  {ScopePrivate, "a"},
		"admin-global":   {ScopeGlobal, "a"},
	}
	const ok, hidden, forbidden, already = "ok", "404", "403", "409"
	// want[actor][row] = read/list, update, delete, publish, unpublish
	want := map[string]map[string][5]string{
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
	answer := func(err error) string {
		switch errs.CodeOf(err) {
		case "":
			return ok
		case errs.NotFound:
			return hidden
		case errs.Forbidden:
			return forbidden
		case errs.Conflict:
			return already
		}
		return fmt.Sprint(err)
	}
	for an, p := range actors {
		for rn, o := range rows {
			w := want[an][rn]
			got := [5]string{
				answer(o.CheckRead(p, "agent")),
				answer(o.CheckUpdate(p, "agent")),
				answer(o.CheckDelete(p, "agent")),
				answer(o.CheckScopeChange(p, ScopeGlobal, "agent")),
				answer(o.CheckScopeChange(p, ScopePrivate, "agent")),
			}
			if got != w {
				t.Errorf("%s on %s: read/update/delete/publish/unpublish = %v, want %v", an, rn, got, w)
			}
			listed := len(VisibleOrdered([]Ownership{o}, p, func(x Ownership) Ownership { return x })) == 1
			if listed != (w[0] == ok) {
				t.Errorf("%s on %s: listed = %v, but read answers %s", an, rn, listed, w[0])
			}
		}
	}
	if CheckCreate(member, ScopeGlobal, "agent") == nil || CheckCreate(member, ScopePrivate, "agent") != nil ||
		CheckCreate(admin, ScopeGlobal, "agent") != nil || errs.CodeOf(CheckCreate(admin, "public", "agent")) != errs.Validation {
		t.Error("CheckCreate")
	}
}

func TestReferenceRules(t *testing.T) {
	mPriv, mGlob := Ownership{ScopePrivate, "m"}, Ownership{ScopeGlobal, "m"}
	nPriv, aGlob := Ownership{ScopePrivate, "n"}, Ownership{ScopeGlobal, "a"}
	cases := []struct {
		holder, target Ownership
		ok             bool
	}{
		{mPriv, mPriv, true}, {mPriv, aGlob, true}, {mPriv, nPriv, false},
		{mGlob, aGlob, true}, {mGlob, mPriv, false}, {mGlob, nPriv, false},
	}
	for _, c := range cases {
		if c.holder.MayReference(c.target) != c.ok {
			t.Errorf("%v → %v: want %v", c.holder, c.target, c.ok)
		}
	}
	// Unpublishing a provider a member's own private agent uses is fine; one
	// a shared agent or someone else's agent uses is not.
	if !ReferenceSurvives(mPriv, mGlob, ScopePrivate) || ReferenceSurvives(aGlob, mGlob, ScopePrivate) ||
		ReferenceSurvives(nPriv, mGlob, ScopePrivate) {
		t.Error("ReferenceSurvives")
	}
}

func TestListingOrder(t *testing.T) {
	type row struct {
		id string
		o  Ownership
	}
	rows := []row{{"5", Ownership{ScopePrivate, "m"}}, {"4", Ownership{ScopeGlobal, "a"}}, {"3", Ownership{ScopePrivate, "n"}},
		{"2", Ownership{ScopeGlobal, "m"}}, {"1", Ownership{ScopeGlobal, "n"}}}
	ids := func(rs []row) (s string) {
		for _, r := range rs {
			s += r.id
		}
		return
	}
	get := func(r row) Ownership { return r.o }
	if got := ids(VisibleOrdered(rows, Principal{User: User{ID: "m", Role: RoleMember}}, get)); got != "4152" {
		t.Errorf("member order %s", got)
	}
	if got := ids(VisibleOrdered(rows, Principal{User: User{ID: "a", Role: RoleAdmin}}, get)); got != "54321" {
		t.Errorf("admin order %s", got)
	}
}

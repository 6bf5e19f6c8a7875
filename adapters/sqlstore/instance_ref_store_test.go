package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TestSwapInstanceRefIsACompareAndSwap: the first recorder wins, a writer
// holding a stale ref loses without an error, an update of the project
// leaves the ref alone, and a missing project is not_found.
func TestSwapInstanceRefIsACompareAndSwap(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "refs")
	id := projectsOf(t, db, s.OwnerID, 1)[0]
	if ok, err := db.SwapInstanceRef(ctx, id, "", "sbx-1"); !ok || err != nil {
		t.Fatalf("recording the first ref = %v, %v", ok, err)
	}
	if ok, err := db.SwapInstanceRef(ctx, id, "", "sbx-2"); ok || err != nil {
		t.Fatalf("a racing recorder = %v, %v; want false, nil", ok, err)
	}
	p, err := db.FindProject(ctx, id)
	if err != nil || p.InstanceRef != "sbx-1" {
		t.Fatalf("the project reads ref %q, %v", p.InstanceRef, err)
	}
	p.Name, p.Revision = "renamed", p.Revision+1
	p.InstanceRef = "not written by updates"
	if err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.UpdateProject(ctx, p) }); err != nil {
		t.Fatal(err)
	}
	if p, _ := db.FindProject(ctx, id); p.InstanceRef != "sbx-1" || p.Name != "renamed" {
		t.Errorf("after an update the project reads %q, ref %q", p.Name, p.InstanceRef)
	}
	if ok, err := db.SwapInstanceRef(ctx, id, "sbx-1", ""); !ok || err != nil {
		t.Errorf("clearing = %v, %v", ok, err)
	}
	if _, err := db.SwapInstanceRef(ctx, "nope", "", "x"); !errs.Is(err, errs.NotFound) {
		t.Errorf("a missing project = %v, want not_found", err)
	}
}

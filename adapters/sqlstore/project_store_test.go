package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The project, host key and instance ref promises are the contract in
// ports/storetest (project_contract_test.go); here, what a bind does to
// the rest of the session row, which only the SQL store shares.

// TestBindSessionTouchesOnlyTheBinding: a bind moves the session's
// project and nothing else, and no session edit moves the binding.
func TestBindSessionTouchesOnlyTheBinding(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "bind")
	p0, p1 := "p0", "p1"
	err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		sb := domain.Sandbox{ID: "sb", Name: "box", Type: domain.SandboxDocker, Revision: 1, CreatedAt: when, UpdatedAt: when,
			Docker: &domain.DockerConfig{Image: "img"}}
		if err := tx.InsertSandbox(ctx, sb); err != nil {
			return err
		}
		for _, id := range []string{p0, p1} {
			p := domain.Project{ID: id, OwnerID: s.OwnerID, Name: id, SandboxID: sb.ID, Revision: 1, Generation: 1, CreatedAt: when, UpdatedAt: when}
			if err := tx.InsertProject(ctx, p); err != nil {
				return err
			}
		}
		_, _, err := tx.BindSession(ctx, s.ID, p0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := db.FindSession(ctx, s.ID)
	if after.ProjectID != p0 {
		t.Fatalf("stored binding = %q, want %q", after.ProjectID, p0)
	}
	before := s
	before.ProjectID = p0
	if !sameJSON(t, after, before) {
		t.Fatalf("binding changed more than the project:\n%+v\nwas\n%+v", after, s)
	}

	// Editing the session does not move its binding: only a bind sets it.
	_, err = db.UpdateSession(ctx, s.ID, func(x *domain.Session) error {
		x.Name, x.ProjectID = "renamed", p1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindSession(ctx, s.ID); got.Name != "renamed" || got.ProjectID != p0 {
		t.Fatalf("after an edit: name %q, project %q (want %q)", got.Name, got.ProjectID, p0)
	}
}

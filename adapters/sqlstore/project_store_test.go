package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/storetest"
)

// projectsOf stores a sandbox and n projects of ownerID on it: p0, p1, …
func projectsOf(t *testing.T, db *DB, ownerID string, n int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		sb := domain.Sandbox{ID: "sb-" + ownerID, Name: "box-" + ownerID, Type: domain.SandboxDocker, Revision: 1, CreatedAt: when,
			UpdatedAt: when, Docker: &domain.DockerConfig{Image: "img"}}
		if err := tx.InsertSandbox(ctx, sb); err != nil {
			return err
		}
		for i := range n {
			p := domain.Project{ID: fmt.Sprintf("p%02d-%s", i, ownerID), OwnerID: ownerID, Name: fmt.Sprintf("proj %d", i), SandboxID: sb.ID,
				Revision: 1, Generation: 1, CreatedAt: when, UpdatedAt: when}
			if err := tx.InsertProject(ctx, p); err != nil {
				return err
			}
			ids = append(ids, p.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// bind binds in a transaction of its own, as the sandboxes service does.
func bind(db *DB, sessionID, projectID string) (bound string, won bool, err error) {
	ctx := context.Background()
	err = db.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		var err error
		bound, won, err = tx.BindSession(ctx, sessionID, projectID)
		return err
	})
	return bound, won, err
}

// TestBindSessionBindsOnce: a session binds the first project it is bound
// to, for good: a later bind to another project (or the same) does not win
// and answers with the project already bound; a missing session is
// not_found; a bind whose transaction fails is undone; no other write
// moves the binding, and binding moves nothing else.
func TestBindSessionBindsOnce(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "bind")
	projects := projectsOf(t, db, s.OwnerID, 3)
	p0, p1 := projects[0], projects[1]
	before, _ := db.FindSession(ctx, s.ID)
	if before.ProjectID != "" {
		t.Fatalf("a new session binds %q", before.ProjectID)
	}

	for _, step := range []struct {
		project   string
		wantBound string
		wantWon   bool
	}{
		{p0, p0, true},  // the first bind wins
		{p1, p0, false}, // another project does not replace it
		{p0, p0, false}, // binding again is not a second win
	} {
		bound, won, err := bind(db, s.ID, step.project)
		if err != nil || bound != step.wantBound || won != step.wantWon {
			t.Fatalf("bind %s = %q, %v, %v; want %q, %v", step.project, bound, won, err, step.wantBound, step.wantWon)
		}
	}
	after, _ := db.FindSession(ctx, s.ID)
	if after.ProjectID != p0 {
		t.Fatalf("stored binding = %q, want %q", after.ProjectID, p0)
	}
	after.ProjectID = ""
	if !sameJSON(t, after, before) {
		t.Fatalf("binding changed more than the project:\n%+v\nwas\n%+v", after, before)
	}
	if counts, err := db.SessionCounts(ctx, projects); err != nil || len(counts) != 1 || counts[p0] != 1 {
		t.Fatalf("session counts = %v %v", counts, err)
	}

	// A session that does not exist binds nothing.
	if _, won, err := bind(db, "nope", p1); errs.CodeOf(err) != errs.NotFound || won {
		t.Fatalf("binding a missing session: won=%v %v", won, err)
	}

	// A bind in a transaction that then fails is rolled back with it: the
	// session is still free for the next bind.
	s2 := newSession(t, db, "bind2")
	boom := errors.New("the check after the bind failed")
	err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		if _, won, err := tx.BindSession(ctx, s2.ID, p1); err != nil || !won {
			t.Fatalf("bind in tx: won=%v %v", won, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("the failed transaction returned %v", err)
	}
	if got, _ := db.FindSession(ctx, s2.ID); got.ProjectID != "" {
		t.Fatalf("a rolled-back bind stuck: %q", got.ProjectID)
	}
	if bound, won, err := bind(db, s2.ID, projects[2]); err != nil || !won || bound != projects[2] {
		t.Fatalf("bind after the rollback = %q %v %v", bound, won, err)
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

// TestBindSessionRace binds one session to a different project from each
// of many goroutines at once: exactly one wins, and every caller — winner
// or not — is told the same, stored, project.
func TestBindSessionRace(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	owner := newSession(t, db, "race-owner").OwnerID
	projects := projectsOf(t, db, owner, storetest.Racers)
	for round := range 10 {
		s := domain.Session{ID: fmt.Sprintf("bind-race-%d", round), OwnerID: owner, CreatedAt: when, UpdatedAt: when}
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		bound := make([]string, storetest.Racers)
		won := make([]bool, storetest.Racers)
		results := make([]error, storetest.Racers)
		storetest.Race(storetest.Racers, func(i int) { bound[i], won[i], results[i] = bind(db, s.ID, projects[i]) })
		winner := -1
		for i := range storetest.Racers {
			if results[i] != nil {
				t.Fatalf("round %d: caller %d: %v", round, i, results[i])
			}
			if won[i] && winner >= 0 {
				t.Fatalf("round %d: callers %d and %d both bound the session", round, winner, i)
			}
			if won[i] {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody bound the session", round)
		}
		for i, b := range bound {
			if b != projects[winner] {
				t.Fatalf("round %d: caller %d was told %q, the winner bound %q", round, i, b, projects[winner])
			}
		}
		if got, _ := db.FindSession(ctx, s.ID); got.ProjectID != projects[winner] {
			t.Fatalf("round %d: stored %q, the winner bound %q", round, got.ProjectID, projects[winner])
		}
	}
}

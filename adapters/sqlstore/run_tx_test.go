package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// A run's start and end are written inside a session transaction: they
// commit with it or not at all.
func TestRunRowsFollowTheSessionTransaction(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	run := domain.Run{ID: "r1", SessionID: s.ID, OwnerID: s.OwnerID, AgentConfigID: "agent", Input: "go", Status: domain.RunRunning,
		CreatedAt: when, UpdatedAt: when}
	later := when.Add(time.Minute)

	// A transaction that fails after starting the run leaves nothing.
	boom := errors.New("boom")
	err := db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error {
		if err := tx.SetRunContext(ctx, "agent", true, later); err != nil {
			return err
		}
		if err := tx.CreateRun(ctx, run); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if _, err := db.FindRun(ctx, "r1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled-back run row: %v", err)
	}
	if got, _ := db.FindSession(ctx, s.ID); got.Planning || got.AgentConfigID != "" {
		t.Fatalf("a rolled-back run context: %+v", got)
	}

	// One that commits keeps both.
	err = db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error {
		if err := tx.SetRunContext(ctx, "agent", true, later); err != nil {
			return err
		}
		return tx.CreateRun(ctx, run)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindSession(ctx, s.ID); !got.Planning || got.AgentConfigID != "agent" || !got.UpdatedAt.Equal(later) {
		t.Fatalf("run context = %+v", got)
	}
	if got, err := db.FindRun(ctx, "r1"); err != nil || got.Status != domain.RunRunning || got.Input != "go" {
		t.Fatalf("run row = %+v, %v", got, err)
	}

	// A taken id is a conflict; a run of another session is refused.
	err = db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.CreateRun(ctx, run) })
	if errs.CodeOf(err) != errs.Conflict {
		t.Errorf("a taken run id: %v", err)
	}
	other := run
	other.ID, other.SessionID = "r2", "elsewhere"
	err = db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.CreateRun(ctx, other) })
	if errs.CodeOf(err) != errs.Internal {
		t.Errorf("another session's run: %v", err)
	}

	// The end, and an end of a run that is not there.
	done := run
	done.Status, done.FinalOutput, done.UpdatedAt, done.EndedAt = domain.RunCompleted, "ok", later, &later
	if err := db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.EndRun(ctx, done) }); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindRun(ctx, "r1"); got.Status != domain.RunCompleted || got.FinalOutput != "ok" || got.EndedAt == nil {
		t.Errorf("ended row = %+v", got)
	}
	done.ID = "missing"
	if err := db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.EndRun(ctx, done) }); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("ending a missing run: %v", err)
	}
}

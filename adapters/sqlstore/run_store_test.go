package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// TestFailOrphanedRuns is the start-up sweep: every run a crash left running
// ends as an error with the reason, at the given time, and is handed back;
// a paused run stays paused and decidable, finished runs are untouched, and
// a second sweep finds nothing.
func TestFailOrphanedRuns(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s1, s2 := newSession(t, db, "fr1"), newSession(t, db, "fr2")
	running1 := newRun(t, db, s1, "r1-running", domain.RunRunning)
	running2 := newRun(t, db, s2, "r2-running", domain.RunRunning)
	done := newRun(t, db, s1, "r3-completed", domain.RunCompleted)
	failed := newRun(t, db, s2, "r4-error", domain.RunError)
	failed.ErrorCode, failed.ErrorMessage = "upstream", "the provider failed"
	if err := db.UpdateRun(ctx, failed); err != nil {
		t.Fatal(err)
	}
	cancelled := newRun(t, db, s2, "r5-cancelled", domain.RunCancelled)
	paused, st, aps := pausedRun(t, db, "fr3", 2)

	untouched := map[string]domain.Run{}
	for _, id := range []string{done.ID, failed.ID, cancelled.ID, paused.ID} {
		r, err := db.FindRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		untouched[id] = r
	}

	at := when.Add(24 * time.Hour)
	const code, msg = domain.CodeServerRestarted, "the server restarted during this run"
	out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: at, Code: code, Message: msg, At: at})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := runIDs(out, nil)
	slices.Sort(ids)
	if !slices.Equal(ids, []string{running1.ID, running2.ID}) {
		t.Fatalf("failed %v, want exactly the running runs", ids)
	}
	for _, r := range out {
		if r.SessionID == "" || r.OwnerID == "" {
			t.Fatalf("a failed run came back without its session or owner: %+v", r)
		}
	}
	for _, before := range []domain.Run{running1, running2} {
		r, err := db.FindRun(ctx, before.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != domain.RunError || r.ErrorCode != code || r.ErrorMessage != msg || r.EndedAt == nil || !r.EndedAt.Equal(at) ||
			!r.UpdatedAt.Equal(at) {
			t.Fatalf("run %s after the sweep = %+v", before.ID, r)
		}
		if r.Input != before.Input || r.LastSeq != before.LastSeq+1 || r.SessionID != before.SessionID || !r.CreatedAt.Equal(before.CreatedAt) {
			t.Fatalf("the sweep rewrote more than the ending of %s: %+v", before.ID, r)
		}
	}
	for id, before := range untouched {
		if r, _ := db.FindRun(ctx, id); !reflect.DeepEqual(r, before) {
			t.Fatalf("run %s changed:\n%+v\nwas\n%+v", id, r, before)
		}
	}

	// The paused run is still paused on the same state, with its calls
	// pending, and a decision still reaches it.
	if r, ok, err := db.FindPausedRun(ctx, paused.SessionID); !ok || err != nil || r.ID != paused.ID {
		t.Fatalf("paused run after the sweep: %+v %v %v", r, ok, err)
	}
	if got, err := db.PauseState(ctx, paused.ID); err != nil || !sameJSON(t, got, st) {
		t.Fatalf("resume state after the sweep = %+v %v", got, err)
	}
	if pending, _ := db.ListApprovals(ctx, paused.OwnerID, paused.SessionID); len(pending) != 2 {
		t.Fatalf("pending approvals after the sweep = %+v", pending)
	}
	for _, a := range aps {
		if _, err := db.DecideApproval(ctx, a.ID, domain.ApprovalApproved, "", "", at, 0); err != nil {
			t.Fatalf("deciding %s after the sweep: %v", a.ID, err)
		}
	}
	if _, _, decided, ok, err := db.ResumeRun(ctx, paused.ID, "crashed", at); !ok || err != nil || len(decided) != 2 {
		t.Fatalf("resuming after the sweep: ok=%v %v %+v", ok, err, decided)
	}

	// The resumed run is running now; a sweep ends it, and then there is
	// nothing left to end.
	if out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: at, Code: code, Message: msg, At: at}); err != nil || len(out) != 1 || out[0].ID != paused.ID {
		t.Fatalf("second sweep = %+v %v", out, err)
	}
	if out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: at.Add(time.Hour), Code: code, Message: msg, At: at.Add(time.Hour)}); err != nil || len(out) != 0 {
		t.Fatalf("third sweep = %+v %v", out, err)
	}
	if r, _ := db.FindRun(ctx, running1.ID); !r.EndedAt.Equal(at) {
		t.Fatalf("a later sweep moved an ended run: %+v", r)
	}
}

// TestFailOrphanedRunsHandsBackWhatItEnded sweeps while runs keep starting:
// the runs handed back are exactly the runs the sweep ended, so none ends
// without the note the caller appends for each.
func TestFailOrphanedRunsHandsBackWhatItEnded(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "sweep")
	const code = domain.CodeServerRestarted
	for round := range 10 {
		var out []domain.Run
		var sweepErr error
		at := when.Add(time.Duration(round+1) * time.Hour)
		race(2, func(i int) {
			if i == 0 {
				out, sweepErr = db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: at, Code: code, Message: "restarted", At: at})
				return
			}
			for j := range 20 {
				r := domain.Run{ID: fmt.Sprintf("sw%02d-%02d", round, j), SessionID: s.ID, OwnerID: s.OwnerID, Status: domain.RunRunning,
					CreatedAt: when, UpdatedAt: when}
				if err := db.CreateRun(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
		if sweepErr != nil {
			t.Fatal(sweepErr)
		}
		handed, _ := runIDs(out, nil)
		all, err := db.ListSessionRuns(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var ended []string
		for _, r := range all {
			if r.Status == domain.RunError && r.EndedAt.Equal(at) {
				ended = append(ended, r.ID)
			}
		}
		slices.Sort(handed)
		if !slices.Equal(handed, ended) {
			t.Fatalf("round %d: handed back %v, ended %v", round, handed, ended)
		}
		// What the sweep did not end is still running, for the next round.
		for _, r := range all {
			if r.Status != domain.RunRunning && r.Status != domain.RunError {
				t.Fatalf("round %d: run %s is %s", round, r.ID, r.Status)
			}
		}
	}
}

// sameJSON compares values as they are stored: raw JSON fields read back
// as null where they were nil.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestCheckpointRun: a running run's checkpoint is what the restart's sweep
// hands back; a run that ended takes no checkpoint, and its end clears one.
func TestCheckpointRun(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "ck")
	live := newRun(t, db, s, "ck-live", domain.RunRunning)
	ended := newRun(t, db, s, "ck-ended", domain.RunRunning)
	if err := db.CheckpointRun(ctx, live.ID, 41, "half an ans"); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckpointRun(ctx, ended.ID, 9, "was streaming"); err != nil {
		t.Fatal(err)
	}
	ended.Status, ended.LastSeq, ended.FinalOutput = domain.RunCompleted, 12, "whole"
	if err := db.UpdateRun(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckpointRun(ctx, ended.ID, 13, "late"); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.FindRun(ctx, ended.ID); r.PartialOutput != "" || r.LastSeq != 12 {
		t.Fatalf("an ended run after a late checkpoint = %+v", r)
	}
	out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: when, Code: domain.CodeServerRestarted, Message: "gone", At: when})
	if err != nil || len(out) != 1 || out[0].PartialOutput != "half an ans" || out[0].LastSeq != 41 {
		t.Fatalf("the sweep handed back %+v, %v", out, err)
	}
	if r, _ := db.FindRun(ctx, live.ID); r.LastSeq != 42 || r.Status != domain.RunError {
		t.Fatalf("the swept run = %+v", r)
	}
}

// TestSeqMarksAndCallsInFlight: the sweep numbers a run's ending past the
// higher of its checkpoint and its seq mark (a mark never goes down) and
// hands back its calls in flight; a run that ended takes no calls in
// flight, and its end clears them.
func TestSeqMarksAndCallsInFlight(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "mk")
	marked := newRun(t, db, s, "mk-marked", domain.RunRunning)
	checked := newRun(t, db, s, "mk-checked", domain.RunRunning)
	ended := newRun(t, db, s, "mk-ended", domain.RunRunning)
	for _, step := range []struct {
		id   string
		upto int64
	}{{marked.ID, 128}, {marked.ID, 256}, {marked.ID, 200}, {checked.ID, 128}} {
		if err := db.MarkRunSeq(ctx, step.id, step.upto); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CheckpointRun(ctx, marked.ID, 90, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckpointRun(ctx, checked.ID, 300, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordCallsInFlight(ctx, marked.ID, `{"calls":[1]}`); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordCallsInFlight(ctx, ended.ID, `{"calls":[2]}`); err != nil {
		t.Fatal(err)
	}
	ended.Status = domain.RunCompleted
	if err := db.UpdateRun(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordCallsInFlight(ctx, ended.ID, `{"calls":[3]}`); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.FindRun(ctx, ended.ID); r.CallsInFlight != "" {
		t.Fatalf("an ended run holds calls in flight: %q", r.CallsInFlight)
	}
	out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: when, Code: domain.CodeServerRestarted, Message: "gone", At: when})
	if err != nil || len(out) != 2 {
		t.Fatalf("the sweep handed back %+v, %v", out, err)
	}
	byID := map[string]domain.Run{out[0].ID: out[0], out[1].ID: out[1]}
	if r := byID[marked.ID]; r.SeqMark != 256 || r.CallsInFlight != `{"calls":[1]}` {
		t.Fatalf("the marked run as handed back: %+v", r)
	}
	for id, want := range map[string]int64{marked.ID: 257, checked.ID: 301} {
		if r, _ := db.FindRun(ctx, id); r.LastSeq != want || r.Status != domain.RunError {
			t.Fatalf("swept run %s: last_seq %d, want %d (%+v)", id, r.LastSeq, want, r)
		}
	}
}

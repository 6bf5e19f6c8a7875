package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// racers is how many goroutines contend for one row in the race tests.
const racers = 16

// race runs fn(i) for i in [0, n) at once (released together, so they
// meet at the store) and waits for all of them.
func race(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// newSession stores an owner and an empty session of theirs.
func newSession(t *testing.T, db *DB, id string) domain.Session {
	t.Helper()
	ctx := context.Background()
	u := user("owner-"+id, domain.RoleMember)
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	s := domain.Session{ID: id, OwnerID: u.ID, Name: "n-" + id, CreatedAt: when, UpdatedAt: when}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newRun stores a run of the session with the given status.
func newRun(t *testing.T, db *DB, s domain.Session, id string, status domain.RunStatus) domain.Run {
	t.Helper()
	r := domain.Run{ID: id, SessionID: s.ID, OwnerID: s.OwnerID, AgentConfigID: "agent", Input: "in-" + id, Status: status,
		LastSeq: 3, CreatedAt: when, UpdatedAt: when}
	if status != domain.RunRunning && status != domain.RunInterrupted {
		end := when.Add(time.Second)
		r.EndedAt, r.FinalOutput = &end, "out-"+id
	}
	if err := db.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// pauseState is a resume state with something in every field, so a lost
// or mangled field shows.
func pauseState(calls int) domain.PauseState {
	st := domain.PauseState{Turn: 2, AgentConfigID: "agent-2", ToolChoice: "auto", Planning: true, Injected: 1}
	for i := range calls {
		st.Calls = append(st.Calls, domain.Item{Type: "function_call", CallID: fmt.Sprintf("c%d", i), Name: "exec_command", Arguments: `{"cmd":"ls"}`})
		st.Gated = append(st.Gated, true)
	}
	return st
}

// pausedRun stores a run of a new session paused on n approvals, the way
// the runner files them: approvals, resume state and status in one
// session transaction.
func pausedRun(t *testing.T, db *DB, sessionID string, n int) (domain.Run, domain.PauseState, []domain.Approval) {
	t.Helper()
	ctx := context.Background()
	s := newSession(t, db, sessionID)
	run := newRun(t, db, s, "run-"+sessionID, domain.RunRunning)
	st := pauseState(n)
	var approvals []domain.Approval
	for i := range n {
		approvals = append(approvals, domain.Approval{ID: fmt.Sprintf("ap-%s-%02d", sessionID, i), SessionID: s.ID, RunID: run.ID,
			OwnerID: s.OwnerID, ToolCallID: fmt.Sprintf("c%d", i), ToolName: "exec_command", Arguments: `{"cmd":"ls"}`,
			CreatedAt: when})
	}
	run.LastSeq, run.UpdatedAt = 7, when.Add(time.Minute)
	if err := db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, approvals, run, st) }); err != nil {
		t.Fatal(err)
	}
	run.Status = domain.RunInterrupted
	return run, st, approvals
}

func decisionOf(i int) (status, scope, reason string) {
	if i%2 == 0 {
		return domain.ApprovalApproved, string(domain.ScopeOnce), fmt.Sprintf("yes %d", i)
	}
	return domain.ApprovalRejected, "", fmt.Sprintf("no %d", i)
}

// TestDecideApprovalOneDecisionWins: many people deciding one approval at
// once — exactly one decision is recorded and answered with the run's
// approvals; every other caller gets not_found and changes nothing.
func TestDecideApprovalOneDecisionWins(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	for round := range 10 {
		run, _, aps := pausedRun(t, db, fmt.Sprintf("dec%d", round), 2)
		target, other := aps[0], aps[1]
		at := when.Add(time.Hour)
		lists := make([][]domain.Approval, racers)
		results := make([]error, racers)
		race(racers, func(i int) {
			status, scope, reason := decisionOf(i)
			lists[i], results[i] = db.DecideApproval(ctx, target.ID, status, scope, reason, at.Add(time.Duration(i)*time.Millisecond), 0)
		})
		winner := -1
		for i, err := range results {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: callers %d and %d both decided %s", round, winner, i, target.ID)
			case err == nil:
				winner = i
			case errs.CodeOf(err) != errs.NotFound:
				t.Fatalf("round %d: a losing decision got %v, want not_found", round, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no decision won: %v", round, results)
		}
		status, scope, reason := decisionOf(winner)
		decidedAt := at.Add(time.Duration(winner) * time.Millisecond)
		check := func(what string, a domain.Approval) {
			t.Helper()
			if a.Status != status || a.Scope != scope || a.Reason != reason || a.DecidedAt == nil || !a.DecidedAt.Equal(decidedAt) ||
				a.RunID != run.ID || a.ToolCallID != target.ToolCallID {
				t.Fatalf("round %d: %s = %+v, want caller %d's decision", round, what, a, winner)
			}
		}
		got := lists[winner]
		if len(got) != 2 || got[0].ID != target.ID || got[1].ID != other.ID || got[1].Status != domain.ApprovalPending {
			t.Fatalf("round %d: the winner was answered %+v, want both approvals of the run", round, got)
		}
		check("the winner's answer", got[0])
		stored, err := db.FindApproval(ctx, target.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("the stored row", stored)
		// The decided approval left the pending lists; its sibling did not.
		pending, _ := db.ListApprovals(ctx, run.OwnerID, run.SessionID)
		if len(pending) != 1 || pending[0].ID != other.ID {
			t.Fatalf("round %d: pending after the decision = %+v", round, pending)
		}
		if _, err := db.FindApprovalByCall(ctx, run.OwnerID, target.ToolCallID); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("round %d: a decided call is still pending by call id: %v", round, err)
		}
	}
}

// TestDecidingEveryCallLeavesSomeoneToResume decides each of a run's calls
// in its own goroutine at once. Each decider is answered with the run's
// approvals including its own decision, and at least one of them sees
// nothing pending: the caller who resumes the run can never be lost between
// two decisions.
func TestDecidingEveryCallLeavesSomeoneToResume(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	const calls = 8
	for round := range 10 {
		_, _, aps := pausedRun(t, db, fmt.Sprintf("all%d", round), calls)
		lists := make([][]domain.Approval, calls)
		results := make([]error, calls)
		race(calls, func(i int) {
			status, scope, reason := decisionOf(i)
			lists[i], results[i] = db.DecideApproval(ctx, aps[i].ID, status, scope, reason, when.Add(time.Hour), 0)
		})
		complete := 0
		for i, err := range results {
			if err != nil {
				t.Fatalf("round %d: deciding call %d: %v", round, i, err)
			}
			if len(lists[i]) != calls {
				t.Fatalf("round %d: decider %d saw %d approvals, want %d", round, i, len(lists[i]), calls)
			}
			pending := 0
			for _, a := range lists[i] {
				if a.ID == aps[i].ID && a.Status == domain.ApprovalPending {
					t.Fatalf("round %d: decider %d was answered without its own decision", round, i)
				}
				if a.Status == domain.ApprovalPending {
					pending++
				}
			}
			if pending == 0 {
				complete++
			}
		}
		if complete == 0 {
			t.Fatalf("round %d: every decider still saw a pending call: nobody would resume the run", round)
		}
	}
}

// TestResumeRunOneCallerWins: many callers resuming one paused run at once
// — exactly one gets ok with the run, its resume state and the decisions;
// the others get ok false and no error. The run is running, its approvals
// are gone (so a late decision is not_found) and it is no longer paused.
func TestResumeRunOneCallerWins(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	for round := range 10 {
		run, st, aps := pausedRun(t, db, fmt.Sprintf("res%d", round), 2)
		for i, a := range aps {
			status, scope, reason := decisionOf(i)
			if _, err := db.DecideApproval(ctx, a.ID, status, scope, reason, when.Add(time.Hour), 0); err != nil {
				t.Fatal(err)
			}
		}
		at := when.Add(2 * time.Hour)
		type result struct {
			run     domain.Run
			state   domain.PauseState
			decided []domain.Approval
			ok      bool
			err     error
		}
		results := make([]result, racers)
		race(racers, func(i int) {
			r := &results[i]
			r.run, r.state, r.decided, r.ok, r.err = db.ResumeRun(ctx, run.ID, "me", at)
		})
		winner := -1
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("round %d: caller %d: %v", round, i, r.err)
			}
			if r.ok && winner >= 0 {
				t.Fatalf("round %d: callers %d and %d both resumed %s", round, winner, i, run.ID)
			}
			if r.ok {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody resumed the run", round)
		}
		w := results[winner]
		if w.run.ID != run.ID || w.run.Status != domain.RunRunning || w.run.LastSeq != run.LastSeq || !w.run.UpdatedAt.Equal(at) {
			t.Fatalf("round %d: the winner got run %+v", round, w.run)
		}
		if w.state.Turn != st.Turn || w.state.AgentConfigID != st.AgentConfigID || !w.state.Planning || len(w.state.Calls) != 2 ||
			!slices.Equal(w.state.Gated, st.Gated) || w.state.Calls[1].CallID != "c1" || w.state.Calls[1].Arguments != st.Calls[1].Arguments {
			t.Fatalf("round %d: the winner got state %+v, want %+v", round, w.state, st)
		}
		if len(w.decided) != 2 || w.decided[0].Status != domain.ApprovalApproved || w.decided[1].Status != domain.ApprovalRejected ||
			w.decided[1].Reason != "no 1" {
			t.Fatalf("round %d: the winner got decisions %+v", round, w.decided)
		}
		stored, err := db.FindRun(ctx, run.ID)
		if err != nil || stored.Status != domain.RunRunning {
			t.Fatalf("round %d: stored run %+v %v", round, stored, err)
		}
		if _, paused, _ := db.FindPausedRun(ctx, run.SessionID); paused {
			t.Fatalf("round %d: the session still has a paused run", round)
		}
		if ids, err := runIDs(db.ListInterruptedRuns(ctx)); err != nil || slices.Contains(ids, run.ID) {
			t.Fatalf("round %d: a resumed run is listed as interrupted: %v %v", round, ids, err)
		}
		for _, a := range aps {
			if _, err := db.FindApproval(ctx, a.ID); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("round %d: approval %s outlived the resume: %v", round, a.ID, err)
			}
			if _, err := db.DecideApproval(ctx, a.ID, domain.ApprovalApproved, "", "", at, 0); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("round %d: a late decision got %v, want not_found", round, err)
			}
		}
		if _, _, _, ok, err := db.ResumeRun(ctx, run.ID, "me", at); ok || err != nil {
			t.Fatalf("round %d: a second resume got ok=%v %v", round, ok, err)
		}
	}
}

// TestResumeAndEndPauseRace: a decision resuming a paused run while a new
// run supersedes it (EndPause) — exactly one of the two wins, and the row
// shows that one's outcome, with the approvals gone either way.
func TestResumeAndEndPauseRace(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	wins := map[string]int{}
	for round := range 20 {
		run, _, aps := pausedRun(t, db, fmt.Sprintf("end%d", round), 1)
		if _, err := db.DecideApproval(ctx, aps[0].ID, domain.ApprovalApproved, "", "", when.Add(time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		ended := run
		at := when.Add(3 * time.Hour)
		ended.Status, ended.ErrorCode, ended.UpdatedAt, ended.EndedAt = domain.RunCancelled, "superseded", at, &at
		var resumed, endWon bool
		var resumeErr, endErr error
		race(2, func(i int) {
			if i == 0 {
				_, _, _, resumed, resumeErr = db.ResumeRun(ctx, run.ID, "me", at)
				return
			}
			endErr = db.WriteSession(ctx, run.SessionID, func(tx ports.SessionTx) error {
				var err error
				endWon, err = tx.EndPause(ctx, ended)
				return err
			})
		})
		if resumeErr != nil || endErr != nil {
			t.Fatalf("round %d: resume %v, end %v", round, resumeErr, endErr)
		}
		if resumed == endWon {
			t.Fatalf("round %d: resumed=%v and ended=%v: want exactly one winner", round, resumed, endWon)
		}
		stored, _ := db.FindRun(ctx, run.ID)
		want := domain.RunRunning
		if endWon {
			want = domain.RunCancelled
			wins["end"]++
		} else {
			wins["resume"]++
		}
		if stored.Status != want {
			t.Fatalf("round %d: stored status %s, want %s", round, stored.Status, want)
		}
		if _, err := db.FindApproval(ctx, aps[0].ID); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("round %d: the approval outlived the race: %v", round, err)
		}
	}
	t.Logf("winners over 20 rounds: %v", wins)
}

// runIDs passes a run listing on as its ids.
func runIDs(runs []domain.Run, err error) ([]string, error) {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids, err
}

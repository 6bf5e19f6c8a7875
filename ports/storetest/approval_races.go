package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The approval contract's races: one winner of every decision, resume and
// ending (see Approvals).

// Racers is how many callers contend for one row in a race.
const Racers = 16

// Race runs fn(i) for i in [0, n) at once (released together, so they
// meet at the store) and waits for all of them.
func Race(n int, fn func(i int)) {
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

func decisionOf(i int) (status, scope, reason string) {
	if i%2 == 0 {
		return domain.ApprovalApproved, string(domain.ScopeOnce), fmt.Sprintf("yes %d", i)
	}
	return domain.ApprovalRejected, "", fmt.Sprintf("no %d", i)
}

func approvalsDecide(t *testing.T, s Stores) {
	ctx := context.Background()
	for round := range 10 {
		run, _, aps := pauseRun(t, s, s.NewSession(t, fmt.Sprintf("dec%d", round)), fmt.Sprintf("r%d", round), 2)
		target, other := aps[0], aps[1]
		at := runEpoch.Add(time.Hour)
		lists := make([][]domain.Approval, Racers)
		results := make([]error, Racers)
		Race(Racers, func(i int) {
			status, scope, reason := decisionOf(i)
			lists[i], results[i] = s.Approvals.DecideApproval(ctx, target.ID, status, scope, reason, at.Add(time.Duration(i)*time.Millisecond), 0)
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
		stored, err := s.Approvals.FindApproval(ctx, target.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("the stored row", stored)
		if pending, _ := s.Approvals.ListApprovals(ctx, run.OwnerID, run.SessionID); len(pending) != 1 || pending[0].ID != other.ID {
			t.Fatalf("round %d: pending after the decision = %v", round, approvalIDs(pending))
		}
	}
	if _, err := s.Approvals.DecideApproval(ctx, "nope", domain.ApprovalApproved, "", "", runEpoch, 0); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deciding a missing approval: %v, want not_found", err)
	}
}

func approvalsDecideAll(t *testing.T, s Stores) {
	ctx := context.Background()
	const calls = 8
	for round := range 10 {
		_, _, aps := pauseRun(t, s, s.NewSession(t, fmt.Sprintf("all%d", round)), fmt.Sprintf("r%d", round), calls)
		lists := make([][]domain.Approval, calls)
		results := make([]error, calls)
		Race(calls, func(i int) {
			status, scope, reason := decisionOf(i)
			lists[i], results[i] = s.Approvals.DecideApproval(ctx, aps[i].ID, status, scope, reason, runEpoch.Add(time.Hour), 0)
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

func approvalsResume(t *testing.T, s Stores) {
	ctx := context.Background()
	for round := range 10 {
		run, st, aps := pauseRun(t, s, s.NewSession(t, fmt.Sprintf("res%d", round)), fmt.Sprintf("r%d", round), 2)
		for i, a := range aps {
			status, scope, reason := decisionOf(i)
			if _, err := s.Approvals.DecideApproval(ctx, a.ID, status, scope, reason, runEpoch.Add(time.Hour), 0); err != nil {
				t.Fatal(err)
			}
		}
		at := runEpoch.Add(2 * time.Hour)
		type result struct {
			run     domain.Run
			state   domain.PauseState
			decided []domain.Approval
			ok      bool
			err     error
		}
		results := make([]result, Racers)
		Race(Racers, func(i int) {
			r := &results[i]
			r.run, r.state, r.decided, r.ok, r.err = s.Approvals.ResumeRun(ctx, run.ID, "me", at)
		})
		winner := -1
		for i, r := range results {
			switch {
			case r.err != nil:
				t.Fatalf("round %d: caller %d: %v", round, i, r.err)
			case r.ok && winner >= 0:
				t.Fatalf("round %d: callers %d and %d both resumed %s", round, winner, i, run.ID)
			case r.ok:
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody resumed the run", round)
		}
		w := results[winner]
		want := findRun(t, s, run.ID)
		if want.Status != domain.RunRunning || want.Replica != "me" || !want.UpdatedAt.Equal(at) || want.LastSeq != run.LastSeq ||
			!reflect.DeepEqual(w.run, want) {
			t.Fatalf("round %d: the winner got run\n%+v\nstored\n%+v", round, w.run, want)
		}
		if !sameJSON(t, w.state, st) {
			t.Fatalf("round %d: the winner got state %+v, want %+v", round, w.state, st)
		}
		if len(w.decided) != 2 || w.decided[0].Status != domain.ApprovalApproved || w.decided[1].Status != domain.ApprovalRejected ||
			w.decided[1].Reason != "no 1" || w.decided[0].ID != aps[0].ID {
			t.Fatalf("round %d: the winner got decisions %+v", round, w.decided)
		}
		if _, paused, _ := s.Approvals.FindPausedRun(ctx, run.SessionID); paused {
			t.Fatalf("round %d: the session still has a paused run", round)
		}
		if list, err := s.Approvals.ListInterruptedRuns(ctx); err != nil || slices.Contains(runIDs(list), run.ID) {
			t.Fatalf("round %d: a resumed run is listed as interrupted: %v %v", round, runIDs(list), err)
		}
		for _, a := range aps {
			if _, err := s.Approvals.FindApproval(ctx, a.ID); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("round %d: approval %s outlived the resume: %v", round, a.ID, err)
			}
			if _, err := s.Approvals.DecideApproval(ctx, a.ID, domain.ApprovalApproved, "", "", at, 0); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("round %d: a late decision got %v, want not_found", round, err)
			}
		}
		if _, _, _, ok, err := s.Approvals.ResumeRun(ctx, run.ID, "me", at); ok || err != nil {
			t.Fatalf("round %d: a second resume got ok=%v %v", round, ok, err)
		}
	}
	if _, _, _, ok, err := s.Approvals.ResumeRun(ctx, "nope", "me", runEpoch); ok || err != nil {
		t.Fatalf("resuming a missing run: ok=%v %v", ok, err)
	}
}

func approvalsEndPause(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	run, _, aps := pauseRun(t, s, sess, "r", 2)
	at := runEpoch.Add(3 * time.Hour)
	ended := run
	ended.Status, ended.ErrorCode, ended.ErrorMessage, ended.UpdatedAt, ended.EndedAt = domain.RunCancelled, "superseded", "a new run", at, &at
	end := func(fail error) (won bool, err error) {
		err = s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error {
			var err error
			if won, err = tx.EndPause(ctx, ended); err != nil {
				return err
			}
			return fail
		})
		return won, err
	}
	boom := errors.New("boom")
	if _, err := end(boom); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got, ok, _ := s.Approvals.FindPausedRun(ctx, sess.ID); !ok || got.ID != run.ID {
		t.Fatal("a rolled-back end ended the pause")
	}
	if pending, _ := s.Approvals.ListApprovals(ctx, sess.OwnerID, sess.ID); len(pending) != 2 {
		t.Fatalf("a rolled-back end took approvals: %v", approvalIDs(pending))
	}
	if won, err := end(nil); !won || err != nil {
		t.Fatalf("end = %v, %v", won, err)
	}
	if won, err := end(nil); won || err != nil {
		t.Fatalf("a second end = %v, %v", won, err)
	}
	got := findRun(t, s, run.ID)
	if got.Status != domain.RunCancelled || got.ErrorCode != "superseded" || got.ErrorMessage != "a new run" || !got.EndedAt.Equal(at) ||
		!got.UpdatedAt.Equal(at) {
		t.Fatalf("the ended run = %+v", got)
	}
	for _, a := range aps {
		if _, err := s.Approvals.FindApproval(ctx, a.ID); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("approval %s outlived its pause: %v", a.ID, err)
		}
	}
	if _, _, _, ok, err := s.Approvals.ResumeRun(ctx, run.ID, "me", at); ok || err != nil {
		t.Fatalf("an ended pause resumed: %v, %v", ok, err)
	}

	// A decision resuming a pause while a new run supersedes it: exactly
	// one of the two wins, and the row shows that one's outcome.
	for round := range 20 {
		run, _, aps := pauseRun(t, s, s.NewSession(t, fmt.Sprintf("end%d", round)), fmt.Sprintf("race%d", round), 1)
		decide(t, s, aps[0].ID, domain.ApprovalApproved)
		ended := run
		ended.Status, ended.ErrorCode, ended.UpdatedAt, ended.EndedAt = domain.RunCancelled, "superseded", at, &at
		var resumed, endWon bool
		var resumeErr, endErr error
		Race(2, func(i int) {
			if i == 0 {
				_, _, _, resumed, resumeErr = s.Approvals.ResumeRun(ctx, run.ID, "me", at)
				return
			}
			endErr = s.Sessions.WriteSession(ctx, run.SessionID, func(tx ports.SessionTx) (err error) {
				endWon, err = tx.EndPause(ctx, ended)
				return err
			})
		})
		if resumeErr != nil || endErr != nil || resumed == endWon {
			t.Fatalf("round %d: resumed=%v (%v), ended=%v (%v): want exactly one winner", round, resumed, resumeErr, endWon, endErr)
		}
		want := domain.RunRunning
		if endWon {
			want = domain.RunCancelled
		}
		if got := findRun(t, s, run.ID); got.Status != want {
			t.Fatalf("round %d: stored status %s, want %s", round, got.Status, want)
		}
		if _, err := s.Approvals.FindApproval(ctx, aps[0].ID); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("round %d: the approval outlived the race: %v", round, err)
		}
	}
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The write side of the session contract: transactions, compaction, forks
// and snapshots (see Sessions).

func sessionsTx(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	appendEntries(t, s, sess.ID, chain("s", 1, 2)...)
	if err := s.Sessions.WriteSession(ctx, "nope", func(ports.SessionTx) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a write of a missing session: %v, want not_found", err)
	}
	for _, id := range []string{"wf", "done"} {
		task := domain.Task{ID: id, RunID: "run-" + id, OwnerID: sess.OwnerID, ParentSessionID: sess.ID, Kind: domain.TaskAgent, Attempt: 1,
			Status: domain.TaskWorking, LaunchedAt: &sessionEpoch, CreatedAt: sessionEpoch, UpdatedAt: sessionEpoch}
		if err := s.Tasks.CreateTask(ctx, task, nil); err != nil {
			t.Fatal(err)
		}
	}
	if won, err := s.Tasks.FinalizeTask(ctx, ports.TaskFinal{TaskID: "done", RunID: "run-done", Status: domain.TaskFailed, At: sessionEpoch}); err != nil || !won {
		t.Fatalf("finalize = %v, %v", won, err)
	}
	rowBefore, wfBefore := findSession(t, s, sess.ID), findTaskOf(t, s, "wf")
	at, later := sessionEpoch.Add(time.Hour), sessionEpoch.Add(2*time.Hour)
	totals := domain.ContextTotals{ActiveChars: 11, AnchorSeq: 3, AnchorUsage: domain.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3},
		CharsAfterAnchor: 4, SessionInputTokens: 5, SessionOutputTokens: 6}
	more := chain("s", 3, 4)
	want := rowBefore
	want.TipID, want.LastSeq, want.Totals, want.AgentConfigID, want.Planning, want.UpdatedAt = "e4", 4, totals, "agent", true, later
	write := func(tx ports.SessionTx) error {
		metas, err := metasOf(more, func(id string) (domain.EntryMeta, error) { return tx.FindMeta(ctx, id) })
		if err != nil {
			return err
		}
		if err := tx.InsertEntries(ctx, more, metas); err != nil {
			return err
		}
		if err := tx.SaveState(ctx, "e4", 4, totals, at); err != nil {
			return err
		}
		// The transaction reads its own writes.
		if row, err := tx.Session(ctx); err != nil || row.TipID != "e4" {
			return fmt.Errorf("the transaction's own row = %+v, %v", row, err)
		}
		if _, err := tx.FindEntry(ctx, "e4"); err != nil {
			return fmt.Errorf("the transaction's own entry: %w", err)
		}
		if err := tx.SetRunContext(ctx, "agent", true, later); err != nil {
			return err
		}
		// Every field, as the commit stores it.
		if row, err := tx.Session(ctx); err != nil || !reflect.DeepEqual(row, want) {
			return fmt.Errorf("the transaction's own row\n%+v (%v)\nwant\n%+v", row, err, want)
		}
		if n, err := tx.MarkCompacted(ctx, []string{"e1"}); err != nil || n != 1 {
			return fmt.Errorf("fold = %d, %w", n, err)
		}
		if err := tx.RecordTaskState(ctx, "wf", "run-wf", []byte(`{"step":1}`), at); err != nil {
			return err
		}
		if won, err := tx.FinalizeTask(ctx, ports.TaskFinal{TaskID: "wf", RunID: "run-wf", Status: domain.TaskCompleted, At: at}); err != nil || !won {
			return fmt.Errorf("finalize in the transaction = %v, %w", won, err)
		}
		return tx.SettleWakeups(ctx, []string{"done:1"}, at)
	}
	boom := errors.New("boom")
	if err := s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error {
		if err := write(tx); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("the failing write: %v", err)
	}
	if got := findSession(t, s, sess.ID); !reflect.DeepEqual(got, rowBefore) {
		t.Fatalf("a failed write changed the session:\n%+v\nwas\n%+v", got, rowBefore)
	}
	if got := entryIDs(t, s, sess.ID); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("a failed write left entries %v", got)
	}
	read(t, s, sess.ID, func(r ports.SessionReader) error {
		if e, err := r.FindEntry(ctx, "e1"); err != nil || e.Compacted {
			t.Fatalf("a failed write folded e1: %+v, %v", e, err)
		}
		return nil
	})
	if got := findTaskOf(t, s, "wf"); !reflect.DeepEqual(got, wfBefore) {
		t.Fatalf("a failed write changed a task:\n%+v\nwas\n%+v", got, wfBefore)
	}
	if due := dueWakeups(t, s, sess.ID); !slices.Equal(due, []string{"done:1"}) {
		t.Fatalf("after a failed write the debts due are %v", due)
	}

	if err := s.Sessions.WriteSession(ctx, sess.ID, write); err != nil {
		t.Fatal(err)
	}
	if got := findSession(t, s, sess.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("the committed write left the session\n%+v\nwant\n%+v", got, want)
	}
	if got := entryIDs(t, s, sess.ID); !slices.Equal(got, []string{"e1", "e2", "e3", "e4"}) {
		t.Fatalf("the committed entries = %v", got)
	}
	if got := findTaskOf(t, s, "wf"); got.Status != domain.TaskCompleted || string(got.State) != `{"step":1}` {
		t.Fatalf("the committed task = %+v", got)
	}
	if due := dueWakeups(t, s, sess.ID); !slices.Equal(due, []string{"wf:1"}) {
		t.Fatalf("after the committed write the debts due are %v", due)
	}
}

func findTaskOf(t *testing.T, s Stores, id string) domain.Task {
	t.Helper()
	got, err := s.Tasks.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func dueWakeups(t *testing.T, s Stores, sessionID string) []string {
	t.Helper()
	due, err := s.Tasks.DueWakeups(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, w := range due {
		out = append(out, w.ID)
	}
	return out
}

func sessionsCompaction(t *testing.T, s Stores) {
	ctx := context.Background()
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	appendEntries(t, s, sess.ID, chain("s", 1, 3)...)
	appendEntries(t, s, other.ID, chain("other", 1, 3)...)
	fold := func(ids ...string) int {
		t.Helper()
		var n int
		if err := s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) (err error) {
			n, err = tx.MarkCompacted(ctx, ids)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := fold("e1", "e2", "zz"); n != 2 {
		t.Fatalf("folded %d, want 2", n)
	}
	if n := fold("e2", "e3"); n != 1 {
		t.Fatalf("folded %d, want only the one not folded before", n)
	}
	if n := fold(); n != 0 {
		t.Fatalf("folding nothing folded %d", n)
	}
	folded := func(sessionID string) []bool {
		var out []bool
		read(t, s, sessionID, func(r ports.SessionReader) error {
			metas, err := r.EntryMetas(ctx, 0)
			all, _ := r.Entries(ctx, 0)
			for i, m := range metas {
				if all[i].Compacted != m.Compacted {
					t.Fatalf("entry %s: compacted %v, its meta %v", m.ID, all[i].Compacted, m.Compacted)
				}
				out = append(out, m.Compacted)
			}
			return err
		})
		return out
	}
	if got := folded(sess.ID); !slices.Equal(got, []bool{true, true, true}) {
		t.Fatalf("folded = %v; a folded entry stays readable, marked", got)
	}
	if got := folded(other.ID); !slices.Equal(got, []bool{false, false, false}) {
		t.Fatalf("another session's entries were folded: %v", got)
	}
}

func sessionsFork(t *testing.T, s Stores) {
	ctx := context.Background()
	src := s.NewSession(t, "src")
	fork := src
	fork.ID, fork.Name, fork.TipID, fork.LastSeq = "fork", "a fork", "e2", 2
	entries := chain("fork", 1, 2)
	metas, err := metasOf(entries, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sessions.CreateSessionWithEntries(ctx, fork, entries, metas); err != nil {
		t.Fatal(err)
	}
	if got := findSession(t, s, fork.ID); got.TipID != "e2" || got.LastSeq != 2 || got.Name != "a fork" {
		t.Fatalf("the fork = %+v", got)
	}
	if got := entryIDs(t, s, fork.ID); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("the fork's entries = %v", got)
	}
	// A taken id: nothing is written, so the entries' row ids stay free.
	again := chain("again", 1, 1)
	againMetas, _ := metasOf(again, nil)
	if err := s.Sessions.CreateSessionWithEntries(ctx, fork, again, againMetas); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a fork on a taken id: %v, want conflict", err)
	}
	// A taken row id: the session is not created either.
	clash := fork
	clash.ID = "clash"
	if err := s.Sessions.CreateSessionWithEntries(ctx, clash, entries, metas); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a fork of taken row ids: %v, want conflict", err)
	}
	if _, err := s.Sessions.FindSession(ctx, clash.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused fork's session exists: %v", err)
	}
	clash.ID = "free"
	if err := s.Sessions.CreateSessionWithEntries(ctx, clash, again, againMetas); err != nil {
		t.Fatalf("the row ids of a refused fork: %v", err)
	}
}

func sessionsSnapshot(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	appendEntries(t, s, sess.ID, chain("s", 1, 2)...)
	for round := range 3 {
		seq := int64(3 + round)
		read(t, s, sess.ID, func(r ports.SessionReader) error {
			before, err := r.Session(ctx)
			if err != nil {
				return err
			}
			// Another writer appends, and commits, now.
			appendEntries(t, s, sess.ID, chain("s", seq, seq)...)
			metas, err := r.EntryMetas(ctx, 0)
			if err != nil || int64(len(metas)) != before.LastSeq {
				t.Fatalf("round %d: the reader saw %d entries of a session at seq %d (%v)", round, len(metas), before.LastSeq, err)
			}
			if _, err := r.FindEntry(ctx, fmt.Sprintf("e%d", seq)); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("round %d: the reader saw an entry written after it began: %v", round, err)
			}
			if again, err := r.Session(ctx); err != nil || !reflect.DeepEqual(again, before) {
				t.Fatalf("round %d: the reader's session moved: %+v, %v", round, again, err)
			}
			return nil
		})
		if got := findSession(t, s, sess.ID); got.LastSeq != seq {
			t.Fatalf("round %d: after the read the session is at seq %d", round, got.LastSeq)
		}
	}
}

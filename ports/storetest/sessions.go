package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Sessions is the contract of ports.SessionStore and its transactions, as
// the session service and the runner lean on them: rows and their order,
// what an update stores, entries read back in seq order, their ids kept
// unique, a write transaction that commits whole (its run and task writes
// too) or not at all, compaction, forks, context profiles, one snapshot
// per read, and a delete that takes what the session holds (its trace
// spans too). open returns an empty database.
func Sessions(t *testing.T, open func(t *testing.T) Stores) {
	t.Run("rows: create, find, list pinned first then newest", func(t *testing.T) { sessionsRows(t, open(t)) })
	t.Run("an update stores name, pinned, planning and agent", func(t *testing.T) { sessionsUpdate(t, open(t)) })
	t.Run("entries read back in seq order", func(t *testing.T) { sessionsEntries(t, open(t)) })
	t.Run("entry ids, seqs and row ids are unique", func(t *testing.T) { sessionsUnique(t, open(t)) })
	t.Run("a write commits whole or not at all", func(t *testing.T) { sessionsTx(t, open(t)) })
	t.Run("compaction folds entries once", func(t *testing.T) { sessionsCompaction(t, open(t)) })
	t.Run("a fork is created with its entries", func(t *testing.T) { sessionsFork(t, open(t)) })
	t.Run("context profiles: one per run, the newest read", func(t *testing.T) { sessionsProfiles(t, open(t)) })
	t.Run("a read is one snapshot", func(t *testing.T) { sessionsSnapshot(t, open(t)) })
	t.Run("a delete takes what the session holds", func(t *testing.T) { sessionsDelete(t, open(t)) })
}

// sessionEpoch is when the session contract's rows happen.
var sessionEpoch = time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)

func findSession(t *testing.T, s Stores, id string) domain.Session {
	t.Helper()
	got, err := s.Sessions.FindSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sessionIDs(list []domain.Session) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func sessionsRows(t *testing.T, s Stores) {
	ctx := context.Background()
	u1, u2 := s.NewSession(t, "a"), s.NewSession(t, "d")
	at := sessionEpoch.Add(1234567 * time.Nanosecond)
	full := domain.Session{ID: "full", OwnerID: u1.OwnerID, Name: "everything", Pinned: true, AgentConfigID: "agent", ProjectID: "proj",
		Planning: true, TipID: "e9", LastSeq: 9, CreatedAt: at, UpdatedAt: at.Add(-time.Hour),
		Totals: domain.ContextTotals{ActiveChars: 1, AnchorSeq: 2, AnchorUsage: domain.Usage{InputTokens: 3, OutputTokens: 4, CachedTokens: 5,
			CacheWriteTokens: 6, TotalTokens: 7}, CharsAfterAnchor: 8, SessionInputTokens: 9, SessionOutputTokens: 10}}
	if err := s.Sessions.CreateSession(ctx, full); err != nil {
		t.Fatal(err)
	}
	want := full
	want.CreatedAt, want.UpdatedAt = kept(full.CreatedAt), kept(full.UpdatedAt)
	if got := findSession(t, s, full.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("stored session:\n%+v\nwant\n%+v", got, want)
	}
	if err := s.Sessions.CreateSession(ctx, full); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken session id: %v, want conflict", err)
	}
	if _, err := s.Sessions.FindSession(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing session: %v, want not_found", err)
	}

	// Pinned first, then by latest activity, then by id, newest first;
	// hidden sessions are never listed.
	for _, r := range []domain.Session{
		{ID: "b", OwnerID: u1.OwnerID, UpdatedAt: sessionEpoch.Add(time.Minute)},
		{ID: "c", OwnerID: u1.OwnerID, UpdatedAt: sessionEpoch, Pinned: true},
		{ID: "b2", OwnerID: u1.OwnerID, UpdatedAt: sessionEpoch.Add(time.Minute)},
		{ID: "e", OwnerID: u1.OwnerID, UpdatedAt: sessionEpoch.Add(time.Hour), Hidden: true, ParentSessionID: "a"},
	} {
		r.CreatedAt = sessionEpoch
		if err := s.Sessions.CreateSession(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for id, at := range map[string]time.Time{u1.ID: sessionEpoch.Add(-time.Hour), u2.ID: sessionEpoch.Add(2 * time.Hour)} {
		if _, err := s.Sessions.UpdateSession(ctx, id, func(r *domain.Session) error { r.UpdatedAt = at; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := s.Sessions.ListSessions(ctx, u1.OwnerID); err != nil || !slices.Equal(sessionIDs(list), []string{"c", "full", "b2", "b", "a"}) {
		t.Fatalf("u1's sessions = %v, %v", sessionIDs(list), err)
	}
	if list, err := s.Sessions.ListSessions(ctx, ""); err != nil || !slices.Equal(sessionIDs(list), []string{"c", "full", "d", "b2", "b", "a"}) {
		t.Fatalf("everyone's sessions = %v, %v", sessionIDs(list), err)
	}
	if list, err := s.Sessions.ListSessions(ctx, "nobody"); err != nil || len(list) != 0 {
		t.Fatalf("nobody's sessions = %v, %v", sessionIDs(list), err)
	}
}

func sessionsUpdate(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	before := findSession(t, s, sess.ID)
	at := sessionEpoch.Add(time.Hour + 1500*time.Microsecond)
	got, err := s.Sessions.UpdateSession(ctx, sess.ID, func(r *domain.Session) error {
		if !reflect.DeepEqual(*r, before) {
			t.Errorf("the change saw\n%+v\nwant the stored row\n%+v", *r, before)
		}
		r.Name, r.Pinned, r.Planning, r.AgentConfigID, r.UpdatedAt = "renamed", true, true, "agent-2", at
		r.OwnerID, r.ProjectID, r.Hidden, r.ParentSessionID, r.TipID, r.LastSeq = "other", "proj", true, "p", "tip", 9
		r.Totals.ActiveChars, r.CreatedAt = 99, at
		return nil
	})
	if err != nil || got.Name != "renamed" || got.TipID != "tip" {
		t.Fatalf("update = %+v, %v; want the row as the change left it", got, err)
	}
	want := before
	want.Name, want.Pinned, want.Planning, want.AgentConfigID, want.UpdatedAt = "renamed", true, true, "agent-2", kept(at)
	if stored := findSession(t, s, sess.ID); !reflect.DeepEqual(stored, want) {
		t.Fatalf("stored after the update:\n%+v\nwant only name, pinned, planning, agent and time changed\n%+v", stored, want)
	}
	boom := errors.New("boom")
	if _, err := s.Sessions.UpdateSession(ctx, sess.ID, func(r *domain.Session) error { r.Name = "lost"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failing change: %v", err)
	}
	if stored := findSession(t, s, sess.ID); stored.Name != "renamed" {
		t.Fatalf("a failing change stored %q", stored.Name)
	}
	if _, err := s.Sessions.UpdateSession(ctx, "nope", func(*domain.Session) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating a missing session: %v, want not_found", err)
	}
}

func sessionsProfiles(t *testing.T, s Stores) {
	ctx := context.Background()
	if err := s.Sessions.SaveContextProfile(ctx, "gone", "r", json.RawMessage(`{}`), sessionEpoch); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a profile of a missing session: %v, want conflict", err)
	}
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	latest := func(id string) string {
		t.Helper()
		var got string
		err := s.Sessions.ReadSession(ctx, id, func(r ports.SessionReader) error {
			p, ok, err := r.LatestContextProfile(ctx)
			if ok {
				got = string(p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := latest(sess.ID); got != "" {
		t.Fatalf("a profile before any run: %q", got)
	}
	save := func(id, run, profile string, at time.Time) {
		t.Helper()
		if err := s.Sessions.SaveContextProfile(ctx, id, run, json.RawMessage(profile), at); err != nil {
			t.Fatal(err)
		}
	}
	save(sess.ID, "r1", `{"n":1}`, sessionEpoch.Add(time.Second))
	save(sess.ID, "r2", `{"n":2}`, sessionEpoch)
	save(other.ID, "r9", `{"n":9}`, sessionEpoch.Add(time.Hour))
	if got := latest(sess.ID); got != `{"n":1}` {
		t.Fatalf("latest = %s, want the newest by time, of this session", got)
	}
	save(sess.ID, "r2", `{"n":3}`, sessionEpoch.Add(time.Minute))
	if got := latest(sess.ID); got != `{"n":3}` {
		t.Fatalf("latest after r2 saved again = %s", got)
	}
	save(sess.ID, "r0", `{"n":4}`, sessionEpoch.Add(time.Minute))
	if got := latest(sess.ID); got != `{"n":3}` {
		t.Fatalf("latest of two at one time = %s, want the greater run id", got)
	}
	// In a session's write transaction: kept with it, or gone with it.
	inTx := func(run, profile string, fail error) error {
		return s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error {
			if err := tx.SaveContextProfile(ctx, run, json.RawMessage(profile), sessionEpoch.Add(time.Hour)); err != nil {
				return err
			}
			return fail
		})
	}
	boom := errs.E(errs.Conflict, "rolled back")
	if err := inTx("r5", `{"n":5}`, boom); err != boom {
		t.Fatalf("a failing transaction: %v", err)
	}
	if got := latest(sess.ID); got != `{"n":3}` {
		t.Fatalf("a rolled back profile was kept: latest = %s", got)
	}
	if err := inTx("r5", `{"n":6}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := latest(sess.ID); got != `{"n":6}` {
		t.Fatalf("latest after a profile saved in a transaction = %s", got)
	}
	if err := inTx("r5", `{"n":7}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := latest(sess.ID); got != `{"n":7}` {
		t.Fatalf("latest after the same run's profile saved again in a transaction = %s", got)
	}
}

func sessionsDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	p, keep := s.NewSession(t, "p"), s.NewSession(t, "keep")
	spawned := func(id string, hidden bool) domain.Session {
		c := domain.Session{ID: id, OwnerID: p.OwnerID, Hidden: hidden, ParentSessionID: p.ID, CreatedAt: sessionEpoch, UpdatedAt: sessionEpoch}
		if err := s.Sessions.CreateSession(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	child, shown := spawned("child", true), spawned("shown", false)
	for _, id := range []string{p.ID, child.ID, keep.ID} {
		appendEntries(t, s, id, chain(id, 1, 2)...)
		saveSpan(t, s, id, "span-"+id, "run-"+id, 0, modelCall(1))
		if err := s.Sessions.SaveContextProfile(ctx, id, "r", json.RawMessage(`{}`), sessionEpoch); err != nil {
			t.Fatal(err)
		}
	}
	pauseRun(t, s, p, "run-p", 1)
	pauseRun(t, s, child, "run-child", 1)
	pauseRun(t, s, keep, "run-keep", 1)
	task := domain.Task{ID: "task", RunID: "run-task", OwnerID: p.OwnerID, ParentSessionID: p.ID, ChildSessionID: child.ID, Kind: domain.TaskAgent,
		Attempt: 1, Status: domain.TaskWorking, LaunchedAt: &sessionEpoch, CreatedAt: sessionEpoch, UpdatedAt: sessionEpoch}
	if err := s.Tasks.CreateTask(ctx, task, nil); err != nil {
		t.Fatal(err)
	}
	if won, err := s.Tasks.FinalizeTask(ctx, ports.TaskFinal{TaskID: "task", RunID: "run-task", Status: domain.TaskCompleted, At: sessionEpoch}); err != nil || !won {
		t.Fatalf("finalize = %v, %v", won, err)
	}

	if err := s.Sessions.DeleteSession(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	// The session and its hidden task sessions are gone, with what they
	// held; a visible session it spawned stays.
	for _, id := range []string{p.ID, child.ID} {
		if _, err := s.Sessions.FindSession(ctx, id); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("session %s outlived the delete: %v", id, err)
		}
		if err := s.Sessions.ReadSession(ctx, id, func(ports.SessionReader) error { return nil }); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("a read of deleted %s: %v, want not_found", id, err)
		}
		if err := s.Sessions.WriteSession(ctx, id, func(ports.SessionTx) error { return nil }); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("a write of deleted %s: %v, want not_found", id, err)
		}
		if runs, err := s.Runs.ListSessionRuns(ctx, id); err != nil || len(runs) != 0 {
			t.Fatalf("%s's runs outlived it: %v, %v", id, runIDs(runs), err)
		}
		if _, err := s.Approvals.FindApproval(ctx, "ap-run-"+id+"-00"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("%s's approval outlived it: %v", id, err)
		}
		if _, err := s.Traces.FindSpanByID(ctx, "span-"+id); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("%s's trace span outlived it: %v", id, err)
		}
	}
	if _, err := s.Tasks.FindTask(ctx, "task"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a task outlived the session that spawned it: %v", err)
	}
	if due, err := s.Tasks.DueWakeups(ctx, p.ID); err != nil || len(due) != 0 {
		t.Fatalf("debts owed to a deleted session: %+v, %v", due, err)
	}
	if got := findSession(t, s, shown.ID); got.ParentSessionID != p.ID {
		t.Fatalf("a visible spawned session = %+v", got)
	}
	// Another session keeps everything.
	if got := entryIDs(t, s, keep.ID); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("another session's entries = %v", got)
	}
	if _, err := s.Approvals.FindApproval(ctx, "ap-run-keep-00"); err != nil {
		t.Fatalf("another session's approval: %v", err)
	}
	if _, err := s.Traces.FindSpanByID(ctx, "span-keep"); err != nil {
		t.Fatalf("another session's trace span: %v", err)
	}
	if err := s.Sessions.DeleteSession(ctx, p.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting twice: %v, want not_found", err)
	}
}

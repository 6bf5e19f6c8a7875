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

// Stores is one database as the run, approval, session and trace
// contracts use it: its sessions (whose write transactions start runs,
// file and end pauses and end tasks), runs, approvals, tasks and trace
// spans, and the roll of replicas the restart sweep reads.
type Stores struct {
	Runs      ports.RunStore
	Approvals ports.ApprovalStore
	Sessions  ports.SessionStore
	Tasks     ports.TaskStore
	Traces    ports.TraceStore
	// Search searches the messages Sessions holds.
	Search ports.MessageSearch
	// Beat puts a replica on the roll, alive at at (ports.ReplicaStore's
	// Beat).
	Beat func(ctx context.Context, replica string, at time.Time) error
	// NewSession stores a visible session with that id, of an owner of
	// its own, and returns it.
	NewSession func(t *testing.T, id string) domain.Session
}

// runEpoch is when the run contract's rows happen.
var runEpoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Runs is the contract of ports.RunStore and the run writes of a session
// transaction, as the runner and the restart lean on them: rows and their
// order, the sweep of orphaned runs (what it hands back, how it numbers
// the ending, whose runs it ends), checkpoints and marks, the live count.
// open returns an empty database.
func Runs(t *testing.T, open func(t *testing.T) Stores) {
	t.Run("rows: create, update, find, oldest first", func(t *testing.T) { runsRows(t, open(t)) })
	t.Run("the sweep ends orphans and hands them back as they were", func(t *testing.T) { runsSweep(t, open(t)) })
	t.Run("the sweep ends only gone replicas' runs", func(t *testing.T) { runsReplicas(t, open(t)) })
	t.Run("the sweep hands back exactly what it ended", func(t *testing.T) { runsSweepRace(t, open(t)) })
	t.Run("checkpoints, seq marks and calls in flight", func(t *testing.T) { runsMarks(t, open(t)) })
	t.Run("live and running runs per owner", func(t *testing.T) { runsLive(t, open(t)) })
	t.Run("a session transaction's run writes", func(t *testing.T) { runsInTx(t, open(t)) })
}

// storeRun writes a run of sess with that status, ended a second after
// runEpoch unless running or paused.
func storeRun(t *testing.T, s Stores, sess domain.Session, id string, status domain.RunStatus) domain.Run {
	t.Helper()
	r := domain.Run{ID: id, SessionID: sess.ID, OwnerID: sess.OwnerID, AgentConfigID: "agent", Input: "in-" + id, Status: status,
		LastSeq: 3, CreatedAt: runEpoch, UpdatedAt: runEpoch}
	if status != domain.RunRunning && status != domain.RunInterrupted {
		end := runEpoch.Add(time.Second)
		r.EndedAt, r.FinalOutput = &end, "out-"+id
	}
	if err := s.Runs.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// ownSession stores another visible session of owner.
func ownSession(t *testing.T, s Stores, owner domain.Session, id string) domain.Session {
	t.Helper()
	sess := domain.Session{ID: id, OwnerID: owner.OwnerID, Name: "n-" + id, CreatedAt: runEpoch, UpdatedAt: runEpoch}
	if err := s.Sessions.CreateSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	return sess
}

func findRun(t *testing.T, s Stores, id string) domain.Run {
	t.Helper()
	r, err := s.Runs.FindRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runIDs(list []domain.Run) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.ID
	}
	return out
}

// kept is t as a store keeps it: UTC, whole milliseconds.
func kept(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

func sweep(t *testing.T, s Stores, o ports.Orphans) []domain.Run {
	t.Helper()
	if o.Code == "" {
		o.Code, o.Message = domain.CodeServerRestarted, "the server restarted during this run"
	}
	out, err := s.Runs.FailOrphanedRuns(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runsRows(t *testing.T, s Stores) {
	ctx := context.Background()
	a, b := s.NewSession(t, "a"), s.NewSession(t, "b")
	at := runEpoch.Add(1234567 * time.Nanosecond)
	r := domain.Run{ID: "r2", SessionID: a.ID, OwnerID: a.OwnerID, AgentConfigID: "agent", ProjectID: "proj", Input: "hello",
		Status: domain.RunRunning, LastSeq: 4, PartialOutput: "half", SeqMark: 9, CallsInFlight: `{"calls":[1]}`, Replica: "rep",
		CreatedAt: at, UpdatedAt: at}
	if err := s.Runs.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	want := r
	want.CreatedAt, want.UpdatedAt = kept(at), kept(at)
	if got := findRun(t, s, r.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("stored run:\n%+v\nwant\n%+v", got, want)
	}
	if err := s.Runs.CreateRun(ctx, r); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken run id: %v, want conflict", err)
	}
	storeRun(t, s, a, "r3", domain.RunCompleted)
	storeRun(t, s, a, "r1", domain.RunRunning)
	storeRun(t, s, b, "r0", domain.RunRunning)
	if list, err := s.Runs.ListSessionRuns(ctx, a.ID); err != nil || !slices.Equal(runIDs(list), []string{"r1", "r2", "r3"}) {
		t.Fatalf("a's runs = %v, %v; want oldest (smallest id) first, of a only", runIDs(list), err)
	}
	if list, err := s.Runs.ListSessionRuns(ctx, "none"); err != nil || len(list) != 0 {
		t.Fatalf("the runs of no session = %v, %v", runIDs(list), err)
	}
	if _, err := s.Runs.FindRun(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing run: %v, want not_found", err)
	}

	// An update stores the run's progress and ending, not whose or what
	// it is, nor its replica or seq mark.
	end := at.Add(time.Minute)
	u := r
	u.SessionID, u.OwnerID, u.ProjectID, u.Input, u.Replica, u.SeqMark, u.CreatedAt = b.ID, b.OwnerID, "other", "changed", "other", 1, end
	u.AgentConfigID, u.Status, u.LastSeq, u.ErrorCode, u.ErrorMessage = "agent-2", domain.RunError, 12, "upstream", "the provider failed"
	u.FinalOutput, u.PartialOutput, u.CallsInFlight, u.UpdatedAt, u.EndedAt = "final", "", "", end, &end
	if err := s.Runs.UpdateRun(ctx, u); err != nil {
		t.Fatal(err)
	}
	endKept := kept(end)
	want.AgentConfigID, want.Status, want.LastSeq, want.ErrorCode, want.ErrorMessage = u.AgentConfigID, u.Status, 12, u.ErrorCode, u.ErrorMessage
	want.FinalOutput, want.PartialOutput, want.CallsInFlight, want.UpdatedAt, want.EndedAt = "final", "", "", endKept, &endKept
	if got := findRun(t, s, r.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("updated run:\n%+v\nwant\n%+v", got, want)
	}
	if err := s.Runs.UpdateRun(ctx, domain.Run{ID: "nope", Status: domain.RunError, UpdatedAt: end}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating a missing run: %v, want not_found", err)
	}
}

func runsSweep(t *testing.T, s Stores) {
	ctx := context.Background()
	s1, s2 := s.NewSession(t, "s1"), s.NewSession(t, "s2")
	running1 := storeRun(t, s, s1, "r1-running", domain.RunRunning)
	running2 := storeRun(t, s, s2, "r2-running", domain.RunRunning)
	if err := s.Runs.CheckpointRun(ctx, running2.ID, 41, "half an ans"); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.MarkRunSeq(ctx, running1.ID, 50); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.RecordCallsInFlight(ctx, running1.ID, `{"calls":[1]}`); err != nil {
		t.Fatal(err)
	}
	storeRun(t, s, s1, "r3-completed", domain.RunCompleted)
	storeRun(t, s, s2, "r4-error", domain.RunError)
	storeRun(t, s, s2, "r5-cancelled", domain.RunCancelled)
	paused, st, _ := pauseRun(t, s, s.NewSession(t, "s3"), "r6-paused", 2)
	untouched := map[string]domain.Run{}
	for _, id := range []string{"r3-completed", "r4-error", "r5-cancelled", paused.ID} {
		untouched[id] = findRun(t, s, id)
	}
	before := map[string]domain.Run{running1.ID: findRun(t, s, running1.ID), running2.ID: findRun(t, s, running2.ID)}

	at := runEpoch.Add(24 * time.Hour)
	out := sweep(t, s, ports.Orphans{Self: "me", AliveSince: at, Code: "server_restarted", Message: "gone", At: at})
	if !slices.Equal(runIDs(out), []string{running1.ID, running2.ID}) {
		t.Fatalf("the sweep ended %v, want the running runs, by id", runIDs(out))
	}
	for _, r := range out {
		if !reflect.DeepEqual(r, before[r.ID]) {
			t.Fatalf("handed back:\n%+v\nwant it as it was\n%+v", r, before[r.ID])
		}
	}
	// The ending is numbered past the higher of checkpoint and mark.
	for id, lastSeq := range map[string]int64{running1.ID: 51, running2.ID: 42} {
		want := before[id]
		want.Status, want.ErrorCode, want.ErrorMessage, want.LastSeq, want.UpdatedAt, want.EndedAt = domain.RunError, "server_restarted", "gone", lastSeq, kept(at), &at
		if got := findRun(t, s, id); !reflect.DeepEqual(got, want) {
			t.Fatalf("swept %s:\n%+v\nwant\n%+v", id, got, want)
		}
	}
	for id, was := range untouched {
		if got := findRun(t, s, id); !reflect.DeepEqual(got, was) {
			t.Fatalf("run %s changed:\n%+v\nwas\n%+v", id, got, was)
		}
	}
	if got, err := s.Approvals.PauseState(ctx, paused.ID); err != nil || !sameJSON(t, got, st) {
		t.Fatalf("a paused run's state after the sweep = %+v, %v", got, err)
	}
	if out := sweep(t, s, ports.Orphans{Self: "me", AliveSince: at.Add(time.Hour), At: at.Add(time.Hour)}); len(out) != 0 {
		t.Fatalf("a second sweep ended %v", runIDs(out))
	}
	if got := findRun(t, s, running1.ID); !got.EndedAt.Equal(at) {
		t.Fatalf("a later sweep moved an ended run: %+v", got)
	}
}

func runsReplicas(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	on := func(id, replica string) {
		r := domain.Run{ID: id, SessionID: sess.ID, OwnerID: sess.OwnerID, Status: domain.RunRunning, Replica: replica,
			CreatedAt: runEpoch, UpdatedAt: runEpoch}
		if err := s.Runs.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	beat := func(replica string, at time.Time) {
		if err := s.Beat(ctx, replica, at); err != nil {
			t.Fatal(err)
		}
	}
	since := runEpoch.Add(time.Hour)
	beat("alive", since)
	beat("stale", since.Add(-time.Millisecond))
	beat("me", runEpoch)
	on("r1-mine", "me")
	on("r2-alive", "alive")
	on("r3-stale", "stale")
	on("r4-never", "never-beat")
	on("r5-none", "")
	o := ports.Orphans{Self: "me", AliveSince: since, At: since}
	if out := sweep(t, s, o); !slices.Equal(runIDs(out), []string{"r3-stale", "r4-never", "r5-none"}) {
		t.Fatalf("a live replica's sweep ended %v; want the runs of replicas not alive since the cutoff, none of its own", runIDs(out))
	}
	// The gone replica left the roll: its beat no longer saves a run of
	// it from a sweep with an earlier cutoff. The alive one stays.
	on("r6-stale", "stale")
	o.AliveSince = runEpoch
	if out := sweep(t, s, o); !slices.Equal(runIDs(out), []string{"r6-stale"}) {
		t.Fatalf("after the gone replica left the roll, the sweep ended %v", runIDs(out))
	}
	// A restart ends its own previous life's runs.
	o.Restarted = true
	if out := sweep(t, s, o); !slices.Equal(runIDs(out), []string{"r1-mine"}) {
		t.Fatalf("a restart's sweep ended %v, want its own", runIDs(out))
	}
	if got := findRun(t, s, "r2-alive"); got.Status != domain.RunRunning {
		t.Fatalf("an alive replica's run was ended: %+v", got)
	}
}

func runsSweepRace(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "sweep")
	for round := range 10 {
		var out []domain.Run
		var sweepErr error
		at := runEpoch.Add(time.Duration(round+1) * time.Hour)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			out, sweepErr = s.Runs.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: at, Code: "c", Message: "m", At: at})
		}()
		go func() {
			defer wg.Done()
			for j := range 20 {
				r := domain.Run{ID: fmt.Sprintf("sw%02d-%02d", round, j), SessionID: sess.ID, OwnerID: sess.OwnerID,
					Status: domain.RunRunning, CreatedAt: runEpoch, UpdatedAt: runEpoch}
				if err := s.Runs.CreateRun(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		wg.Wait()
		if sweepErr != nil {
			t.Fatal(sweepErr)
		}
		all, err := s.Runs.ListSessionRuns(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		var ended []string
		for _, r := range all {
			switch {
			case r.Status == domain.RunError && r.EndedAt.Equal(at):
				ended = append(ended, r.ID)
			case r.Status != domain.RunRunning && r.Status != domain.RunError:
				t.Fatalf("round %d: run %s is %s", round, r.ID, r.Status)
			}
		}
		if handed := runIDs(out); !slices.Equal(handed, ended) {
			t.Fatalf("round %d: handed back %v, ended %v", round, handed, ended)
		}
	}
}

func runsMarks(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	marked := storeRun(t, s, sess, "marked", domain.RunRunning)
	checked := storeRun(t, s, sess, "checked", domain.RunRunning)
	ended := storeRun(t, s, sess, "ended", domain.RunRunning)
	for _, step := range []struct {
		id   string
		upto int64
	}{{marked.ID, 128}, {marked.ID, 256}, {marked.ID, 200}, {checked.ID, 128}, {"nope", 5}} {
		if err := s.Runs.MarkRunSeq(ctx, step.id, step.upto); err != nil {
			t.Fatal(err)
		}
	}
	if got := findRun(t, s, marked.ID); got.SeqMark != 256 {
		t.Fatalf("seq mark = %d, want the highest (a mark never goes down)", got.SeqMark)
	}
	for _, c := range []struct {
		id      string
		seq     int64
		partial string
	}{{marked.ID, 90, "mark"}, {checked.ID, 300, "check"}, {ended.ID, 9, "was streaming"}, {"nope", 1, ""}} {
		if err := s.Runs.CheckpointRun(ctx, c.id, c.seq, c.partial); err != nil {
			t.Fatal(err)
		}
	}
	for id, calls := range map[string]string{marked.ID: `{"calls":[1]}`, ended.ID: `{"calls":[2]}`, "nope": "x"} {
		if err := s.Runs.RecordCallsInFlight(ctx, id, calls); err != nil {
			t.Fatal(err)
		}
	}
	if got := findRun(t, s, marked.ID); got.LastSeq != 90 || got.PartialOutput != "mark" || got.CallsInFlight != `{"calls":[1]}` {
		t.Fatalf("a running run's checkpoint = %+v", got)
	}
	// An end clears what it does not carry; then nothing lands on it.
	ended.Status, ended.LastSeq, ended.FinalOutput = domain.RunCompleted, 12, "whole"
	if err := s.Runs.UpdateRun(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.CheckpointRun(ctx, ended.ID, 13, "late"); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.RecordCallsInFlight(ctx, ended.ID, `{"calls":[3]}`); err != nil {
		t.Fatal(err)
	}
	if got := findRun(t, s, ended.ID); got.LastSeq != 12 || got.PartialOutput != "" || got.CallsInFlight != "" {
		t.Fatalf("an ended run took a late checkpoint or calls: %+v", got)
	}
	if err := s.Runs.RecordCallsInFlight(ctx, marked.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got := findRun(t, s, marked.ID); got.CallsInFlight != "" {
		t.Fatalf("calls in flight not cleared: %q", got.CallsInFlight)
	}
}

func runsLive(t *testing.T, s Stores) {
	ctx := context.Background()
	owner := s.NewSession(t, "s1")
	other := s.NewSession(t, "theirs")
	count := func(who domain.Session) int {
		t.Helper()
		n, err := s.Runs.CountLiveRuns(ctx, who.OwnerID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(owner); n != 0 {
		t.Fatalf("an owner with no runs has %d live", n)
	}
	storeRun(t, s, owner, "busy", domain.RunRunning)
	storeRun(t, s, ownSession(t, s, owner, "s2"), "busy-2", domain.RunRunning)
	for _, status := range []domain.RunStatus{domain.RunCompleted, domain.RunError, domain.RunCancelled} {
		storeRun(t, s, owner, "over-"+string(status), status)
	}
	storeRun(t, s, other, "theirs", domain.RunRunning)
	_, _, waiting := pauseRun(t, s, ownSession(t, s, owner, "s3"), "waiting", 2)
	if n := count(owner); n != 2 {
		t.Fatalf("%d live, want the two running ones (not the finished, nor one paused on a call)", n)
	}
	decide(t, s, waiting[0].ID, domain.ApprovalApproved)
	if n := count(owner); n != 2 {
		t.Fatalf("%d live with a call still pending", n)
	}
	decide(t, s, waiting[1].ID, domain.ApprovalRejected)
	if n := count(owner); n != 3 {
		t.Fatalf("%d live, want a paused run with every call decided counted (it resumes)", n)
	}
	if n := count(other); n != 1 {
		t.Fatalf("another owner has %d live", n)
	}
	// The running ones are listed, on every replica: an account's deletion
	// stops each where it runs.
	running := func(who domain.Session) []string {
		t.Helper()
		list, err := s.Runs.ListRunningRuns(ctx, who.OwnerID)
		if err != nil {
			t.Fatal(err)
		}
		return runIDs(list)
	}
	if got := running(owner); !slices.Equal(got, []string{"busy", "busy-2"}) {
		t.Fatalf("running runs %v, want busy and busy-2 (not the finished, nor the paused)", got)
	}
	if got := running(other); !slices.Equal(got, []string{"theirs"}) {
		t.Fatalf("another owner's running runs %v", got)
	}
}

func runsInTx(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s1")
	write := func(fn func(tx ports.SessionTx) error) error { return s.Sessions.WriteSession(ctx, sess.ID, fn) }
	run := domain.Run{ID: "r1", SessionID: sess.ID, OwnerID: sess.OwnerID, AgentConfigID: "agent", Input: "go", Status: domain.RunRunning,
		CreatedAt: runEpoch, UpdatedAt: runEpoch}

	// A transaction that fails after starting the run leaves nothing; the
	// count in it saw the run.
	boom := errors.New("boom")
	live := 0
	err := write(func(tx ports.SessionTx) (err error) {
		if err := tx.CreateRun(ctx, run); err != nil {
			return err
		}
		if live, err = tx.CountLiveRuns(ctx, sess.OwnerID); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || live != 1 {
		t.Fatalf("the failing start = %v, counting %d live", err, live)
	}
	if _, err := s.Runs.FindRun(ctx, run.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled-back run row: %v", err)
	}
	if err := write(func(tx ports.SessionTx) error { return tx.CreateRun(ctx, run) }); err != nil {
		t.Fatal(err)
	}
	if got := findRun(t, s, run.ID); got.Status != domain.RunRunning || got.Input != "go" {
		t.Fatalf("the started run = %+v", got)
	}

	// A running run holds the session; an ended one does not. A run of
	// another session is refused.
	second := run
	second.ID = "r2"
	if err := write(func(tx ports.SessionTx) error { return tx.CreateRun(ctx, second) }); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a second running run: %v, want conflict", err)
	}
	if err := write(func(tx ports.SessionTx) error { return tx.CreateRun(ctx, run) }); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken run id: %v, want conflict", err)
	}
	elsewhere := run
	elsewhere.ID, elsewhere.SessionID = "r3", s.NewSession(t, "s2").ID
	if err := write(func(tx ports.SessionTx) error { return tx.CreateRun(ctx, elsewhere) }); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("another session's run: %v, want internal", err)
	}

	// The fence: only the replica the row names holds a running run.
	hold := func(id, replica string) error {
		return write(func(tx ports.SessionTx) error { return tx.HoldRun(ctx, id, replica) })
	}
	if err := hold(run.ID, run.Replica); err != nil {
		t.Fatalf("the run's own replica holding it: %v", err)
	}
	if err := hold(run.ID, run.Replica+"-other"); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("another replica holding it: %v, want conflict", err)
	}
	if err := hold("missing", run.Replica); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("holding a missing run: %v, want not_found", err)
	}

	// An end is stored with the transaction, or not at all.
	later := runEpoch.Add(time.Minute)
	done := run
	done.Status, done.FinalOutput, done.UpdatedAt, done.EndedAt = domain.RunCompleted, "ok", later, &later
	if err := write(func(tx ports.SessionTx) error { _ = tx.EndRun(ctx, done); return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := findRun(t, s, run.ID); got.Status != domain.RunRunning || got.EndedAt != nil {
		t.Fatalf("a rolled-back end: %+v", got)
	}
	if err := write(func(tx ports.SessionTx) error { return tx.EndRun(ctx, done) }); err != nil {
		t.Fatal(err)
	}
	if got := findRun(t, s, run.ID); got.Status != domain.RunCompleted || got.FinalOutput != "ok" || !got.EndedAt.Equal(later) {
		t.Fatalf("the ended run = %+v", got)
	}
	if err := hold(run.ID, run.Replica); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("holding an ended run: %v, want conflict", err)
	}
	if err := write(func(tx ports.SessionTx) error { return tx.CreateRun(ctx, second) }); err != nil {
		t.Fatalf("a start after the end: %v", err)
	}
	missing := done
	missing.ID = "missing"
	if err := write(func(tx ports.SessionTx) error { return tx.EndRun(ctx, missing) }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("ending a missing run: %v, want not_found", err)
	}
}

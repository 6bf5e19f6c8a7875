package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/ports"
)

// writeLog is a WriteObserver keeping what it heard.
type writeLog struct {
	mu     sync.Mutex
	writes []heardWrite
}

type heardWrite struct{ waited, took time.Duration }

func (l *writeLog) StoreWrite(waited, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, heardWrite{waited, took})
}

func (l *writeLog) heard() []heardWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]heardWrite(nil), l.writes...)
}

// Every write is heard once, reads are not; a transaction's wait is known
// on both engines, a lone statement's on Postgres only (it runs in a
// locked transaction there; SQLite's database/sql queue keeps it).
func TestEveryWriteIsTimed(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := context.Background()
	log := &writeLog{}
	db.ObserveWrites(log)

	s := newSession(t, db, "timed") // a lone user insert, the session's insert
	if err := db.PutSetting(ctx, ports.StoredSetting{Key: "k", Value: "v", UpdatedAt: when}); err != nil {
		t.Fatal(err)
	}
	if err := db.tx(ctx, func(q txQ) error {
		_, err := q.ExecContext(ctx, `UPDATE sessions SET name = ? WHERE id = ?`, "renamed", s.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	got := log.heard()
	if len(got) != 4 {
		t.Fatalf("heard %d writes, want 4 (user, session, setting, transaction): %v", len(got), got)
	}
	for i, w := range got {
		lone := i < 3
		switch {
		case w.took <= 0:
			t.Errorf("write %d took %v", i, w.took)
		case w.waited > w.took:
			t.Errorf("write %d waited %v, longer than it took (%v)", i, w.waited, w.took)
		case lone && db.Dialect() == "sqlite" && w.waited >= 0:
			t.Errorf("lone statement %d on SQLite: waited %v, want unknown (<0)", i, w.waited)
		case (!lone || db.Dialect() == "postgres") && w.waited < 0:
			t.Errorf("write %d: waited unknown, want known", i)
		}
	}

	db.ObserveWrites(nil)
	if err := db.PutSetting(ctx, ports.StoredSetting{Key: "k", Value: "w", UpdatedAt: when}); err != nil {
		t.Fatal(err)
	}
	if n := len(log.heard()); n != 4 {
		t.Errorf("heard %d writes after ObserveWrites(nil), want still 4", n)
	}
}

// A write queued behind another is heard waiting at least as long as it
// stood in line: the Postgres write lock, or SQLite's one writer.
func TestAQueuedWriteIsHeardWaiting(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "queued")
	log := &writeLog{}
	db.ObserveWrites(log)

	release, holding := make(chan struct{}), make(chan struct{})
	holderDone := make(chan error, 1)
	go func() {
		holderDone <- db.tx(ctx, func(q txQ) error {
			close(holding)
			<-release
			_, err := q.ExecContext(ctx, `UPDATE sessions SET name = ? WHERE id = ?`, "first", s.ID)
			return err
		})
	}()
	<-holding
	waitsBefore := db.write.Stats().WaitCount
	queuedDone := make(chan error, 1)
	go func() {
		queuedDone <- db.tx(ctx, func(q txQ) error {
			_, err := q.ExecContext(ctx, `UPDATE sessions SET name = ? WHERE id = ?`, "second", s.ID)
			return err
		})
	}()
	// Poll until the second writer stands in line: on Postgres a
	// transaction of this database (other tests share the cluster) not
	// granted the advisory lock; on SQLite a request waiting for the
	// writer connection.
	pollUntil(t, func() bool {
		if db.Dialect() == "sqlite" {
			return db.write.Stats().WaitCount > waitsBefore
		}
		var n int
		err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		return err == nil && n > 0
	})
	// The queued writer has waited since before it was seen in line, and
	// waits until the holder commits, after the release.
	const inLine = 30 * time.Millisecond
	time.Sleep(inLine)
	close(release)
	if err := <-holderDone; err != nil {
		t.Fatal(err)
	}
	if err := <-queuedDone; err != nil {
		t.Fatal(err)
	}
	got := log.heard()
	if len(got) != 2 {
		t.Fatalf("heard %d writes, want 2: %v", len(got), got)
	}
	// Both held the write for the time in line (the holder while the other
	// waited, the queued one waiting); the queued one (heard first or
	// second: each is heard after its commit) waited it out.
	waited := max(got[0].waited, got[1].waited)
	for _, w := range got {
		if w.took < inLine || w.took < w.waited {
			t.Errorf("a write took %v (waited %v); both took at least the %v one stood in line", w.took, w.waited, inLine)
		}
	}
	if waited < inLine {
		t.Errorf("the writes waited %v and %v; the queued one stood in line at least %v", got[0].waited, got[1].waited, inLine)
	}
}

// pollUntil polls cond every few milliseconds, failing after ten seconds.
func pollUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the condition never held")
		}
	}
}

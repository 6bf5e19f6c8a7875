package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The backplane on Postgres: LISTEN/NOTIFY on one channel, so a team needs no
// server beside its database. A payload past notifyMax goes by reference:
// its row in bus_payloads is written in the transaction that notifies
// "@id", and the listeners read it from there. Each replica sends from one
// connection, in batches (one transaction each), so its messages arrive in
// the order it sent them. A batch that fails is sent again once the
// database answers (NOTIFY is delivered at commit, so at worst a batch
// whose commit was not confirmed arrives twice: the listeners drop
// repeats); only a message the full queue cannot take is dropped, counted
// in the log, and the listeners ask for what they miss.

// backplaneChannel is the channel every replica listens on.
const backplaneChannel = "agents_bus" // its name from before the rename: replicas of both versions meet on it

// notifyMax is the largest payload sent inline: NOTIFY refuses 8000 bytes
// and more.
const notifyMax = 7000

// backplaneQueue is how many messages may wait to be sent; past it Publish
// drops (a run never waits for the backplane).
const backplaneQueue = 1 << 14

// backplaneBatch is the most messages one transaction sends.
const backplaneBatch = 256

// payloadsKept is how long a by-reference payload is kept for listeners.
const payloadsKept = time.Minute

// PGBackplane is the backplane over the store's Postgres database.
type PGBackplane struct {
	db    *DB
	log   *slog.Logger
	queue chan []byte

	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}

	dropped    atomic.Int64 // messages the full queue refused, not yet logged
	dropLogged atomic.Int64 // unix ms of the last drop warning
}

// Backplane returns the backplane over this database, sending from a connection of its
// own until Close. Only Postgres has one: SQLite serves one process.
func (db *DB) Backplane(log *slog.Logger) (*PGBackplane, error) {
	if db.url == "" {
		return nil, errs.E(errs.Internal, "only a Postgres store carries a backplane")
	}
	b := &PGBackplane{db: db, log: log, queue: make(chan []byte, backplaneQueue), closing: make(chan struct{}), done: make(chan struct{})}
	go b.send()
	return b, nil
}

var _ ports.Backplane = (*PGBackplane)(nil)

// Publish implements ports.Backplane.
func (b *PGBackplane) Publish(payload []byte) {
	select {
	case <-b.closing:
	case b.queue <- payload:
	default:
		n := b.dropped.Add(1)
		now := time.Now().UnixMilli()
		if last := b.dropLogged.Load(); now-last > time.Second.Milliseconds() && b.dropLogged.CompareAndSwap(last, now) {
			b.dropped.Add(-n)
			b.log.Warn("the backplane's queue is full (the database is slow or away); messages were dropped, the other replicas will ask for them",
				"count", n)
		}
	}
}

// Close implements ports.Backplane.
func (b *PGBackplane) Close() {
	b.closeOnce.Do(func() { close(b.closing) })
	select {
	case <-b.done:
	case <-time.After(2 * time.Second):
	}
}

// send sends what is queued, a batch per transaction; a batch that fails
// is sent again (on a new connection, after a pause) until it goes or the
// backplane closes.
func (b *PGBackplane) send() {
	defer close(b.done)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	lastSweep := time.Now()
	for {
		var first []byte
		select {
		case first = <-b.queue:
		case <-b.closing:
			// Send what is already queued, then stop.
			select {
			case first = <-b.queue:
			default:
				return
			}
		}
		msgs := [][]byte{first}
		for len(msgs) < backplaneBatch {
			select {
			case m := <-b.queue:
				msgs = append(msgs, m)
				continue
			default:
			}
			break
		}
		for failures := 0; ; failures++ {
			var err error
			if conn, err = b.sendOnce(conn, msgs, &lastSweep); err == nil {
				break
			}
			if failures == 0 || failures%30 == 0 {
				b.log.Warn("sending on the backplane failed; sending again when the database answers", "count", len(msgs), "err", err)
			}
			select {
			case <-b.closing:
				b.log.Warn("the backplane closed before the database answered; messages were not sent", "count", len(msgs))
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// sendOnce sends one batch on conn (connecting first when it is closed);
// it returns the connection to use next, nil after a failure.
func (b *PGBackplane) sendOnce(conn *pgx.Conn, msgs [][]byte, lastSweep *time.Time) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if conn == nil || conn.IsClosed() {
		var err error
		if conn, err = pgx.Connect(ctx, b.db.url); err != nil {
			return nil, err
		}
	}
	sweep := time.Since(*lastSweep) > payloadsKept
	if err := b.sendBatch(ctx, conn, msgs, sweep); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	if sweep {
		*lastSweep = time.Now()
	}
	return conn, nil
}

// sendBatch notifies msgs in one transaction, storing the large ones.
func (b *PGBackplane) sendBatch(ctx context.Context, conn *pgx.Conn, msgs [][]byte, sweep bool) error {
	batch := &pgx.Batch{}
	now := time.Now().UnixMilli()
	if sweep {
		batch.Queue(`DELETE FROM bus_payloads WHERE created_at < $1`, now-payloadsKept.Milliseconds())
	}
	for _, m := range msgs {
		if len(m) <= notifyMax && !strings.HasPrefix(string(m), "@") {
			batch.Queue(`SELECT pg_notify($1, $2)`, backplaneChannel, string(m))
			continue
		}
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		ref := hex.EncodeToString(id)
		batch.Queue(`INSERT INTO bus_payloads (id, data, created_at) VALUES ($1, $2, $3)`, ref, string(m), now)
		batch.Queue(`SELECT pg_notify($1, $2)`, backplaneChannel, "@"+ref)
	}
	return conn.SendBatch(ctx, batch).Close()
}

// Listen implements ports.Backplane: one connection LISTENs; a payload by
// reference is read through the store's pool.
func (b *PGBackplane) Listen(ctx context.Context, deliver func([]byte), listening func(up bool)) {
	if listening == nil {
		listening = func(bool) {}
	}
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, b.db.url)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+backplaneChannel)
		}
		if err == nil {
			listening(true)
		}
		for err == nil {
			var n *pgconn.Notification
			if n, err = conn.WaitForNotification(ctx); err == nil {
				b.deliver(ctx, n.Payload, deliver)
			}
		}
		if conn != nil {
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return
		}
		listening(false)
		b.log.Warn("the backplane lost its database connection; listening again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// deliver hands one notification's message on, reading it first when it
// came by reference.
func (b *PGBackplane) deliver(ctx context.Context, payload string, deliver func([]byte)) {
	ref, byRef := strings.CutPrefix(payload, "@")
	if !byRef {
		deliver([]byte(payload))
		return
	}
	var data string
	if err := b.db.read.QueryRowContext(ctx, `SELECT data FROM bus_payloads WHERE id = ?`, ref).Scan(&data); err != nil {
		if ctx.Err() == nil {
			b.log.Warn("a backplane message sent by reference could not be read", "ref", ref, "err", err)
		}
		return
	}
	deliver([]byte(data))
}

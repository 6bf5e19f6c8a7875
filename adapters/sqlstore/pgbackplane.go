package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
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
// the order it sent them.

// backplaneChannel is the channel every replica listens on.
const backplaneChannel = "agents_bus" // its name from before the rename: replicas of both versions meet on it

// notifyMax is the largest payload sent inline: NOTIFY refuses 8000 bytes
// and more.
const notifyMax = 7000

// backplaneQueue is how many messages may wait to be sent before Publish waits.
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

// send sends what is queued, a batch per transaction, reconnecting after
// a failure (what a failed batch held is lost, and logged).
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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if conn == nil || conn.IsClosed() {
			var err error
			if conn, err = pgx.Connect(ctx, b.db.url); err != nil {
				cancel()
				b.log.Warn("the backplane cannot reach the database; messages were dropped", "count", len(msgs), "err", err)
				conn = nil
				b.pause(time.Second)
				continue
			}
		}
		sweep := time.Since(lastSweep) > payloadsKept
		if err := b.sendBatch(ctx, conn, msgs, sweep); err != nil {
			b.log.Warn("sending on the backplane failed; messages were dropped", "count", len(msgs), "err", err)
			conn.Close(ctx)
			conn = nil
		} else if sweep {
			lastSweep = time.Now()
		}
		cancel()
	}
}

// pause waits d, or less when the backplane closes.
func (b *PGBackplane) pause(d time.Duration) {
	select {
	case <-time.After(d):
	case <-b.closing:
	}
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
func (b *PGBackplane) Listen(ctx context.Context, deliver func([]byte)) {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, b.db.url)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+backplaneChannel)
		}
		if err == nil {
			deliver(nil) // listening (again): what was sent before is not heard
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

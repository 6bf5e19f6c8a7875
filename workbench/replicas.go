package workbench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports"

	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/core/runs"
)

// DefaultFailoverAfter is Options.FailoverAfter's default.
const DefaultFailoverAfter = 30 * time.Second

// Replicas. Every workbench is a replica with an id on the store's roll,
// beating while it lives. On SQLite it is the only one: at start every run
// left running is a crash's, and all the once-only work is its own. On
// Postgres several share the database: a replica is gone when its beat is
// older than half of FailoverAfter; the holder of the failover lease then
// ends the runs it left running and the tasks they attempted, and pays the
// wake-ups they owe. The timings keep the whole within FailoverAfter:
//
//	beat every bound/5 · gone after bound/2 without one · checked every
//	bound/10 · leases last bound/4, so a dead holder's lapse first
//
// so the worst case (the dead replica held the failover lease) is about
// 0.6 × FailoverAfter after its last beat.
type replicaTimings struct{ beat, gone, check, lease time.Duration }

func timings(bound time.Duration) replicaTimings {
	return replicaTimings{beat: bound / 5, gone: bound / 2, check: bound / 10, lease: bound / 4}
}

// Lease names: the work only one replica does at a time.
const (
	leaseFailover = "failover"
	leaseTriggers = "triggers"
	leaseUpkeep   = "upkeep"
	leaseIdle     = "idle-sandboxes"
)

// joinRoll puts this replica on the roll and ends what crashed replicas
// left running: its own previous life's runs, and every other replica's
// on SQLite or those of replicas gone for good on Postgres (the rest are
// the failover loop's).
func (w *Workbench) joinRoll(ctx context.Context) error {
	now := w.clock.Now()
	if err := w.db.Beat(ctx, w.replica, now); err != nil {
		return err
	}
	aliveSince := now
	if w.shared {
		aliveSince = now.Add(-w.times.gone)
	}
	_, err := w.recover(ctx, aliveSince, true)
	return err
}

// recover ends the orphaned runs (see runs.RecoverOrphans) and the tasks
// they attempted (on SQLite every task left working); it returns how many
// runs it ended.
func (w *Workbench) recover(ctx context.Context, aliveSince time.Time, restarted bool) (int, error) {
	orphans, err := w.runs.RecoverOrphans(ctx, aliveSince, restarted)
	if err != nil {
		return 0, err
	}
	var runIDs []string
	if w.shared {
		runIDs = make([]string, 0, len(orphans))
		for _, r := range orphans {
			runIDs = append(runIDs, r.ID)
		}
	}
	return len(orphans), w.tasks.Recover(ctx, runIDs)
}

// beat keeps this replica on the roll until ctx ends.
func (w *Workbench) beat(ctx context.Context) {
	defer w.loops.Done()
	w.every(ctx, w.times.beat, func(ctx context.Context) {
		if err := w.db.Beat(ctx, w.replica, w.clock.Now()); err != nil && ctx.Err() == nil {
			w.log.Warn("replica heartbeat failed", "err", err)
		}
	})
}

// failover, on the holder of its lease, ends what gone replicas left
// running and pays the wake-ups their tasks now owe.
func (w *Workbench) failover(ctx context.Context) {
	defer w.loops.Done()
	w.every(ctx, w.times.check, w.leased(leaseFailover, func(ctx context.Context) {
		n, err := w.recover(ctx, w.clock.Now().Add(-w.times.gone), false)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("failover sweep failed", "err", err)
			}
			return
		}
		if n > 0 {
			w.log.Warn("failover: ended the runs of replicas that are gone", "count", n)
			w.tasks.Drain(ctx)
		}
	}))
}

// leased wraps once-only work: on a shared database it runs only on the
// replica holding the lease called name (taken or renewed at each pass);
// on SQLite it always runs.
func (w *Workbench) leased(name string, sweep func(context.Context)) func(context.Context) {
	if !w.shared {
		return sweep
	}
	return func(ctx context.Context) {
		held, err := w.db.ClaimLease(ctx, name, w.replica, w.clock.Now(), w.times.lease)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("claiming a lease failed", "lease", name, "err", err)
			}
			return
		}
		if held {
			sweep(ctx)
		}
	}
}

// leaveRoll takes this replica off the roll at a clean stop, giving up its
// leases: the others take its work over at once.
func (w *Workbench) leaveRoll() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := w.db.Leave(ctx, w.replica); err != nil {
		w.log.Warn("leaving the replica roll failed", "err", err)
	}
}

// Replica is this workbench's id on the replica roll.
func (w *Workbench) Replica() string { return w.replica }

// peering joins this workbench to the other replicas over the store's
// backplane; nil on SQLite, where one process serves alone (its methods are
// then the single process's answers).
type peering struct {
	link      *replicas.Link
	backplane *sqlstore.PGBackplane
	cancel    context.CancelFunc // ends the listening
}

// joinPeers makes h relay what it numbers over the store's backplane; nil on
// SQLite.
func joinPeers(db *sqlstore.DB, replica string, h *hub.Hub, ids ports.IDs, log *slog.Logger) (*peering, error) {
	if db.Dialect() != "postgres" {
		return nil, nil
	}
	backplane, err := db.Backplane(log)
	if err != nil {
		return nil, err
	}
	link := replicas.New(replica, backplane, h, ids, log)
	h.SetRelay(link)
	return &peering{link: link, backplane: backplane}, nil
}

// streams is the closer the auth service uses: local, and, with peers,
// every closing relayed (their caches forget, their streams close).
func (p *peering) streams(local auth.StreamCloser, forget replicas.Forgetter) auth.StreamCloser {
	if p == nil {
		return local
	}
	return p.link.Streams(local, forget)
}

// runPeers is the run engine's way to the other replicas (nil: none).
func (p *peering) runPeers() runs.Peers {
	if p == nil {
		return nil
	}
	return p.link
}

// start has exec carry out the commands sent here, and listens.
func (p *peering) start(exec replicas.Executor) {
	if p == nil {
		return
	}
	p.link.Attach(exec)
	var ctx context.Context
	ctx, p.cancel = context.WithCancel(context.Background())
	go p.link.Listen(ctx)
}

// close stops listening, and sending once what is queued is sent.
func (p *peering) close() {
	if p == nil {
		return
	}
	if p.cancel != nil {
		p.cancel()
	}
	p.backplane.Close()
}

// replicaFile holds, in the data dir, this workbench's id on the roll.
const replicaFile = "replica-id"

// replicaID names this workbench on the roll, the same across its
// restarts, so a restart ends what its previous life left running at
// once: Options.ReplicaID, or the id kept in the data dir (made on first
// start), or a new one each start without a data dir. The data dir's id
// is locked while the workbench is open: two processes on one data dir
// would be one replica twice. unlock gives the lock up.
func replicaID(o Options, ids ports.IDs) (id string, unlock func(), err error) {
	if o.ReplicaID != "" {
		return o.ReplicaID, func() {}, nil
	}
	if o.DataDir == "" || o.DB != nil && o.DatabaseURL == "" {
		return ids.NewID(), func() {}, nil
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return "", nil, errs.Wrap(errs.Unavailable, err, "create the data directory %s", o.DataDir)
	}
	path := filepath.Join(o.DataDir, replicaFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", nil, errs.Wrap(errs.Unavailable, err, "open %s", path)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return "", nil, errs.E(errs.Unavailable, "another agents-server is running on the data directory %s: "+
			"give each replica a --data-dir of its own", o.DataDir)
	}
	unlock = func() { f.Close() } // closing releases the lock
	b, err := io.ReadAll(f)
	if err != nil {
		unlock()
		return "", nil, errs.Wrap(errs.Unavailable, err, "read %s", path)
	}
	if id = strings.TrimSpace(string(b)); id != "" {
		return id, unlock, nil
	}
	id = ids.NewID()
	if _, err := f.WriteString(id + "\n"); err != nil {
		unlock()
		return "", nil, errs.Wrap(errs.Unavailable, err, "write %s", path)
	}
	return id, unlock, f.Sync()
}

// seqMarks keeps the hub's run seq marks in the runs table, saying when a
// write fails: the run goes on, its ids unguarded against a crash until a
// later write takes.
type seqMarks struct {
	db  *sqlstore.DB
	log *slog.Logger
}

func (m seqMarks) MarkRunSeq(ctx context.Context, runID string, upto int64) error {
	err := m.db.MarkRunSeq(ctx, runID, upto)
	if err != nil {
		m.log.Warn("recording a run's seq mark failed", "run_id", runID, "err", err)
	}
	return err
}

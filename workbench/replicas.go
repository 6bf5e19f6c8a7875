package workbench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/ports"

	"github.com/agents-server/agents-server/core/replicas"
)

// DefaultFailoverAfter is Options.FailoverAfter's default.
const DefaultFailoverAfter = replicas.DefaultFailoverAfter

// The replica roll's policy (beats, leases, failover) is core/replicas';
// what is here wires it: the replica's id, the backplane that joins the
// replicas, and the hub's seq marks.

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

// joinPeers builds this replica's end of the store's backplane; nil on
// SQLite. It is built before the hub, whose relay it is; it files what the
// other replicas send once it listens (listen).
func joinPeers(db *sqlstore.DB, replica string, ids ports.IDs, log *slog.Logger) (*peering, error) {
	if db.Dialect() != "postgres" {
		return nil, nil
	}
	backplane, err := db.Backplane(log)
	if err != nil {
		return nil, err
	}
	return &peering{link: replicas.New(replica, backplane, ids, log), backplane: backplane}, nil
}

// relay is the hub's way to the other replicas (nil: none).
func (p *peering) relay() hub.Relay {
	if p == nil {
		return nil
	}
	return p.link
}

// streams is the closer the auth service uses: local, and, with peers,
// every closing relayed (their caches forget, their streams close).
func (p *peering) streams(local auth.StreamCloser) auth.StreamCloser {
	if p == nil {
		return local
	}
	return p.link.Streams(local)
}

// fence says when auth's token cache may answer: with peers, only while
// this replica hears the backplane (replicas.Link.CacheTrusted); nil on
// SQLite, where this process makes every change itself.
func (p *peering) fence() auth.CacheFence {
	if p == nil {
		return nil
	}
	return p.link
}

// runPeers is the run engine's way to the other replicas (nil: none).
func (p *peering) runPeers() remote.Peers {
	if p == nil {
		return nil
	}
	return p.link
}

// listen files what the other replicas send in to, until close.
func (p *peering) listen(to replicas.Deliveries) {
	if p == nil {
		return
	}
	var ctx context.Context
	ctx, p.cancel = context.WithCancel(context.Background())
	go p.link.Listen(ctx, to)
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

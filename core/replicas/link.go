// Package replicas joins the replicas sharing a store over a backplane: what a
// replica's hub numbers reaches every other replica's hub (so a watcher
// anywhere follows a run running anywhere), and a command for a run goes
// to the replica running it, whose answer comes back.
package replicas

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/ports"
)

// CommandTimeout bounds how long a command waits for the replica running
// its run to answer.
const CommandTimeout = 10 * time.Second

// The kinds of message on the backplane.
const (
	kindEvent   = "event"   // a run's event, numbered by its replica
	kindNotice  = "notice"  // an owner's notice
	kindCommand = "command" // a command for a run, to the replica running it
	kindReply   = "reply"   // a command's answer, to the replica that sent it
)

// message is what the backplane carries, as JSON.
type message struct {
	From    string          `json:"from"`
	Kind    string          `json:"kind"`
	To      string          `json:"to,omitempty"`
	Run     string          `json:"run,omitempty"`
	Session string          `json:"session,omitempty"`
	Owner   string          `json:"owner,omitempty"`
	Event   *domain.Event   `json:"event,omitempty"`
	ID      string          `json:"id,omitempty"` // a command's, echoed by its reply
	Command *remote.Command `json:"command,omitempty"`
	Code    errs.Code       `json:"code,omitempty"` // a reply's refusal
	Message string          `json:"message,omitempty"`
	Token   string          `json:"token,omitempty"` // a closing's token id
	Reason  string          `json:"reason,omitempty"`
	After   int64           `json:"after,omitempty"`  // a fetch's cursor, echoed by its answer
	Events  []domain.Event  `json:"events,omitempty"` // a fetch's answer
}

// Executor carries out the commands sent to this replica (the run engine).
type Executor interface {
	Execute(ctx context.Context, cmd remote.Command) error
}

// Deliveries are where a link files what the other replicas send it. They
// are handed to Listen, once they are all built: the hub relays through
// the link, so the link is built first, before what it delivers to.
type Deliveries struct {
	// Hub files the other replicas' run events and owners' notices.
	Hub *hub.Hub
	// Runs carries out the commands for runs running here (nil: each is
	// answered unavailable).
	Runs Executor
	// Streams closes this replica's streams of a credential closed
	// elsewhere (nil: none are open here).
	Streams auth.StreamCloser
	// Credentials forgets the cached copy of a credential closed
	// elsewhere, before Streams close, and every cached credential when
	// the listener reconnects (nil: nothing is cached here).
	Credentials Forgetter
	// Stored says how a mirrored run ended when its replica cannot (it
	// is gone, or no longer holds the run); nil: the hole is a gap and
	// the stream waits for the failover's ending.
	Stored RunFinder
}

// Link is one replica's end of the backplane. It is the hub's relay and the run
// engine's peers.
type Link struct {
	self      string
	backplane ports.Backplane
	ids       ports.IDs
	log       *slog.Logger

	start    time.Time // the fence's clock: durations since it
	ownPing  []byte    // how this replica's own pings begin
	ownClose []byte    // how its own closings begin

	heardPing   atomic.Int64 // send time+1 of the last own ping heard (0: none)
	connectedAt atomic.Int64 // time+1 the listener last (re)connected (0: never said)

	mu       sync.Mutex
	waiting  map[string]chan error    // command id → its answer
	closings map[string]*closing      // closing id → its confirmations
	peers    map[string]time.Duration // replica → when its last ping was heard
	done     recentIDs                // commands carried out (a retried send delivers twice)

	mirrors mirrors // the runs mirrored here, for catching up
}

// New returns the link of replica self over backplane: a hub's relay and
// the run engine's peers. What other replicas send is filed once it
// listens (Listen).
func New(self string, backplane ports.Backplane, ids ports.IDs, log *slog.Logger) *Link {
	return &Link{self: self, backplane: backplane, ids: ids, log: log, start: time.Now(),
		ownPing: ownPrefix(self, kindPing), ownClose: ownPrefix(self, kindClose),
		waiting: map[string]chan error{}, closings: map[string]*closing{}, peers: map[string]time.Duration{},
		mirrors: mirrors{runs: map[string]*mirrorState{}}}
}

// Listen receives from the backplane until ctx ends, filing what other
// replicas send in to, pings meanwhile (the revocation fence), and
// catches the mirrored runs up after what the backplane lost (a listener
// that was down, a hole, a quiet run).
func (l *Link) Listen(ctx context.Context, to Deliveries) {
	go l.ping(ctx)
	go l.catchUp(ctx, to)
	first := true
	l.backplane.Listen(ctx, func(b []byte) { l.receive(ctx, to, b) }, func(up bool) {
		if !up {
			return
		}
		l.reconnected(to)
		if !first {
			l.rejoined(to)
		}
		first = false
	})
}

// send publishes m as "<sender> <JSON>": every replica hears its own
// messages too, and drops them by the prefix without decoding them.
func (l *Link) send(m message) {
	m.From = l.self
	b, err := json.Marshal(m)
	if err != nil {
		l.log.Error("encoding a backplane message failed", "kind", m.Kind, "err", err)
		return
	}
	l.backplane.Publish(append([]byte(l.self+" "), b...))
}

// RunEvent implements hub.Relay.
func (l *Link) RunEvent(runID, sessionID, ownerID string, ev domain.Event) {
	l.send(message{Kind: kindEvent, Run: runID, Session: sessionID, Owner: ownerID, Event: &ev})
}

// Notice implements hub.Relay.
func (l *Link) Notice(ownerID string, ev domain.Event) {
	l.send(message{Kind: kindNotice, Owner: ownerID, Event: &ev})
}

// Command implements remote.Peers: it sends cmd to replica and waits for the
// answer, at most CommandTimeout.
func (l *Link) Command(ctx context.Context, replica string, cmd remote.Command) error {
	id := l.ids.NewID()
	answer := make(chan error, 1)
	l.mu.Lock()
	l.waiting[id] = answer
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiting, id)
		l.mu.Unlock()
	}()
	l.send(message{Kind: kindCommand, To: replica, ID: id, Command: &cmd})
	wait := time.NewTimer(CommandTimeout)
	defer wait.Stop()
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return errs.E(errs.Unavailable, "the server running this run did not answer; retry shortly")
	}
}

// receive files one message from the backplane.
func (l *Link) receive(ctx context.Context, to Deliveries, b []byte) {
	from, body, ok := bytes.Cut(b, []byte(" "))
	if !ok {
		return // malformed
	}
	if string(from) == l.self {
		l.ownHeard(body)
		return
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		l.log.Warn("a malformed backplane message was dropped", "err", err)
		return
	}
	if m.To != "" && m.To != l.self {
		return // for another replica
	}
	switch m.Kind {
	case kindEvent:
		if m.Event != nil {
			l.mirrorEvent(to, m)
		}
	case kindFetch:
		l.answerFetch(to, m)
	case kindEvents:
		l.filed(ctx, to, m)
	case kindNotice:
		if m.Event != nil {
			to.Hub.MirrorNotice(m.Owner, *m.Event)
		}
	case kindCommand:
		if m.Command != nil && l.done.add(m.ID) {
			go l.execute(ctx, to.Runs, m)
		}
	case kindClose:
		closeHere(to, m)
		if m.ID != "" {
			l.send(message{Kind: kindClosed, To: m.From, ID: m.ID})
		}
	case kindClosed:
		l.confirmed(m.From, m.ID)
	case kindPing:
		l.peerPinged(m.From)
	case kindReply:
		l.mu.Lock()
		answer := l.waiting[m.ID]
		l.mu.Unlock()
		if answer != nil {
			var err error
			if m.Code != "" {
				err = errs.E(m.Code, "%s", m.Message)
			}
			answer <- err
		}
	}
}

// execute carries out a command sent here and answers it.
func (l *Link) execute(ctx context.Context, exec Executor, m message) {
	var err error
	if exec == nil {
		err = errs.E(errs.Unavailable, "the server is starting; retry shortly")
	} else {
		err = exec.Execute(ctx, *m.Command)
	}
	reply := message{Kind: kindReply, To: m.From, ID: m.ID}
	if err != nil {
		reply.Code, reply.Message = errs.CodeOf(err), errs.MessageOf(err)
	}
	l.send(reply)
}

// The link is the hub's relay, the run engine's peers and the token
// cache's fence.
var (
	_ hub.Relay       = (*Link)(nil)
	_ remote.Peers    = (*Link)(nil)
	_ auth.CacheFence = (*Link)(nil)
)

// recentIDs remembers the last ids it was given, so a message delivered
// twice is acted on once.
type recentIDs struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring [1024]string
	next int
}

// add notes id and reports whether it is new.
func (r *recentIDs) add(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]struct{}{}
	}
	if _, dup := r.seen[id]; dup {
		return false
	}
	delete(r.seen, r.ring[r.next])
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
	r.seen[id] = struct{}{}
	return true
}

package replicas

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// The revocation fence. A credential closed on one replica must stop
// working on every replica by the time the closing answers, though each
// keeps a cache of verified tokens. Two things make it so, at no cost per
// request beyond a clock read:
//
//   - The closing waits for every live replica to confirm it dropped the
//     credential (kindClosed), at most CloseAckWithin once it has heard its
//     own closing back.
//   - A replica trusts its cache only while it hears its own pings, sent
//     every PingEvery, within CacheTrustFor of sending them; and it drops
//     its whole cache each time its listener (re)connects, since what was
//     sent while it was away is lost.
//
// Why that suffices: every listener hears every message in one order (the
// commit order on Postgres). Say replica X still answers from a cache
// holding a token after the closing's answer. X has not heard the closing
// (hearing it drops the token, and a lookup already reading the store
// cannot store its answer after that: the cache's generation). X's cache
// was filled on its current connection, so that connection began before
// the closing was sent, and X heard its own ping p, sent within
// CacheTrustFor; so p came before the closing. The closer's listener
// heard p before hearing its closing back — unless p came before the
// closer's own listener connected, but the closer answers CacheTrustFor
// after connecting at the earliest, and p was sent before that — and
// within livePeersFor of it: X is among the replicas the closer waited
// for. Had X confirmed, it would have dropped the token; so the wait ran
// out, CacheTrustFor or more after the closing came back, and X has
// heard nothing of its own since p, sent before then: X does not trust
// its cache. The replicas that do not answer in time cost a revoke
// CloseAckWithin at most, and a replica that cannot hear the backplane
// reads tokens from the store until it can.

// The fence's timings.
const (
	// PingEvery is how often a replica pings itself (and the others) over
	// the backplane.
	PingEvery = 500 * time.Millisecond
	// CacheTrustFor is how recently a replica must have sent the last own
	// ping it heard for its token cache to answer.
	CacheTrustFor = 3 * PingEvery
	// CloseAckWithin bounds how long a closing waits, once heard back, for
	// the live replicas to confirm it; it must be at least CacheTrustFor.
	CloseAckWithin = 2 * time.Second
	// CloseHeardWithin bounds how long a closing waits to hear itself on
	// the backplane: past it the backplane is broken here, and the others
	// keep their cached copies until their cache's ttl or fence drops them.
	CloseHeardWithin = 5 * time.Second
	// livePeersFor is how recently a replica's ping must have been heard
	// for a closing to wait for its confirmation: at least CacheTrustFor,
	// plus slack for the ping's way.
	livePeersFor = CacheTrustFor + PingEvery
)

// The fence's kinds of message.
const (
	kindPing   = "ping"   // a replica's sign of life; ID is its send time
	kindClosed = "closed" // a replica confirms a closing (ID), to its sender
)

// closing is a closing this replica sent, waiting for confirmations.
type closing struct {
	back    chan struct{}   // closed once this replica hears it back
	heard   bool            // back is closed
	changed chan struct{}   // signalled on each confirmation
	acks    map[string]bool // the replicas that confirmed
}

// CacheTrusted implements auth.CacheFence: the last own ping this replica
// heard was sent less than CacheTrustFor ago (what its cache held before
// its listener last connected is gone: reconnected).
func (l *Link) CacheTrusted() bool {
	h := l.heardPing.Load()
	return h != 0 && l.since()-time.Duration(h-1) < CacheTrustFor
}

// since is the time on this replica's monotonic clock (the fence compares
// durations only, so wall-clock steps do not move it).
func (l *Link) since() time.Duration { return time.Since(l.start) }

// ping sends this replica's pings until ctx ends, the first at once.
func (l *Link) ping(ctx context.Context) {
	l.sendPing()
	Every(ctx, PingEvery, func(context.Context) { l.sendPing() })
}

// sendPing sends a ping carrying its send time.
func (l *Link) sendPing() {
	l.send(message{Kind: kindPing, ID: strconv.FormatInt(int64(l.since()), 10)})
}

// ownHeard files a message of this replica's own heard back: a ping moves
// the fence, a closing's return starts the wait for its confirmations.
// Only those two are decoded: the rest (events) are many.
func (l *Link) ownHeard(body []byte) {
	switch {
	case hasPrefix(body, l.ownPing):
		var m message
		if json.Unmarshal(body, &m) != nil {
			return
		}
		if sent, err := strconv.ParseInt(m.ID, 10, 64); err == nil && sent >= 0 {
			l.heardPing.Store(sent + 1)
		}
	case hasPrefix(body, l.ownClose):
		var m message
		if json.Unmarshal(body, &m) != nil || m.ID == "" {
			return
		}
		l.mu.Lock()
		if c := l.closings[m.ID]; c != nil && !c.heard {
			c.heard = true
			close(c.back)
		}
		l.mu.Unlock()
	}
}

// reconnected files a (re)connection of this replica's listener: what was
// sent while it was away is lost, closings too, so its cache forgets every
// credential.
func (l *Link) reconnected(to Deliveries) {
	l.connectedAt.Store(int64(l.since()) + 1)
	if to.Credentials != nil {
		to.Credentials.ForgetAll()
	}
	l.sendPing() // heard back, the cache answers again without a tick's wait
}

// peerPinged records a ping heard from another replica.
func (l *Link) peerPinged(from string) {
	l.mu.Lock()
	l.peers[from] = l.since()
	l.mu.Unlock()
}

// confirmed records replica from's confirmation of closing id.
func (l *Link) confirmed(from, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.closings[id]; c != nil {
		c.acks[from] = true
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// closeEverywhere sends a closing to the other replicas and returns the
// wait for their confirmations (see the fence).
func (l *Link) closeEverywhere(m message) (wait func()) {
	m.ID = l.ids.NewID()
	c := &closing{back: make(chan struct{}), changed: make(chan struct{}, 1), acks: map[string]bool{}}
	l.mu.Lock()
	l.closings[m.ID] = c
	l.mu.Unlock()
	l.send(m)
	return func() {
		defer func() {
			l.mu.Lock()
			delete(l.closings, m.ID)
			l.mu.Unlock()
		}()
		heard := time.NewTimer(CloseHeardWithin)
		defer heard.Stop()
		select {
		case <-c.back:
		case <-heard.C:
			l.log.Error("a credential's closing was not heard back on the backplane: other replicas may accept it until their caches expire",
				"user_id", m.Owner, "token_id", m.Token)
			return
		}
		// The replicas heard from lately are all those whose cache may
		// answer (see the fence), but for those whose last ping came
		// before this replica's listener (re)connected: their caches stop
		// answering CacheTrustFor after that ping, so the closing does not
		// answer before CacheTrustFor after the connection began.
		need := l.livePeers()
		defer func() {
			if r := l.connectedAt.Load(); r != 0 {
				if d := time.Duration(r-1) + CacheTrustFor - l.since(); d > 0 {
					time.Sleep(d)
				}
			}
		}()
		limit := time.NewTimer(CloseAckWithin)
		defer limit.Stop()
		for {
			l.mu.Lock()
			var missing []string
			for _, p := range need {
				if !c.acks[p] {
					missing = append(missing, p)
				}
			}
			l.mu.Unlock()
			if len(missing) == 0 {
				return
			}
			select {
			case <-c.changed:
			case <-limit.C:
				// Their caches no longer answer by now (the fence).
				l.log.Warn("replicas did not confirm a credential's closing in time", "replicas", missing,
					"user_id", m.Owner, "token_id", m.Token)
				return
			}
		}
	}
}

// livePeers are the other replicas pinged within livePeersFor.
func (l *Link) livePeers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.since()
	var out []string
	for p, at := range l.peers {
		if now-at < livePeersFor {
			out = append(out, p)
		} else if now-at > time.Hour {
			delete(l.peers, p) // long gone: keep the map small
		}
	}
	return out
}

// ownPrefix is how this replica's own messages of kind begin in JSON
// (message's fields encode in order: from, then kind).
func ownPrefix(self, kind string) []byte {
	from, _ := json.Marshal(self)
	return []byte(`{"from":` + string(from) + `,"kind":"` + kind + `"`)
}

func hasPrefix(b, prefix []byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}

package mcp

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Connection timing.
const (
	// HandshakeTimeout bounds a dial and its first tool listing.
	HandshakeTimeout = 30 * time.Second
	// RetryCap is the longest wait between redials after transport
	// failures; the waits double from RetryFirst and are jittered.
	RetryCap   = 30 * time.Second
	RetryFirst = time.Second
)

// phase is where a server's connection is.
type phase int

const (
	idle        phase = iota // no connection, nothing in flight
	connecting               // a dial is in flight
	authorizing              // a dial waits for the person's OAuth sign-in
	connected
)

// conn is one server's live state. Every field is guarded by Service.mu;
// gen numbers the attempts, so a superseded one drops what it learns.
type conn struct {
	gen       uint64
	cancel    context.CancelFunc // ends the current attempt or session watch
	phase     phase
	session   ports.MCPSession
	tools     []Tool
	lastErr   string
	needsAuth bool // OAuth has no usable grant: only a sign-in helps
	failures  int  // transport failures in a row, for the backoff
	retry     *time.Timer
	auth      *attempt // the interactive sign-in while authorizing
	// grant is the sealed grant this replica last dialed with or wrote:
	// a stored grant unlike it was written by another replica's sign-in.
	grant string
}

// Start connects every enabled server in the background; a server each
// person signs in to, once for each person who keeps a grant for it.
func (s *Service) Start(ctx context.Context) error {
	rows, err := s.d.Store.ListMCPServers(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	for _, r := range rows {
		switch {
		case !r.Enabled:
		case r.Config.PerPersonAuth:
			// Everyone who signed in: a trigger's or a task's run must not
			// find its owner's connection still to be made.
			users, err := s.d.Store.MCPPersonalGrantHolders(ctx, r.ID)
			if err != nil {
				return err
			}
			for _, u := range users {
				s.dialAgain(key{r.ID, u}, true)
			}
		default:
			s.reconnect(r.ID)
		}
	}
	return nil
}

// Close ends every connection and waits for the attempts to stop.
func (s *Service) Close() {
	s.stop()
	s.mu.Lock()
	var sessions []ports.MCPSession
	for _, c := range s.conns {
		if c.retry != nil {
			c.retry.Stop()
		}
		if c.session != nil {
			sessions = append(sessions, c.session)
		}
		c.session, c.phase = nil, idle
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		_ = ss.Close()
	}
	s.wg.Wait()
}

// connLocked returns the connection's conn, made on first use. s.mu is
// held.
func (s *Service) connLocked(k key) *conn {
	c := s.conns[k]
	if c == nil {
		c = &conn{}
		s.conns[k] = c
	}
	return c
}

// supersede ends whatever the server's connection is doing and starts a
// new generation in phase next; it returns the generation and its
// context. s.mu is held; the caller finishes what it ended (ended is
// appended to: the old session, a superseded sign-in) outside the lock.
func (s *Service) supersede(c *conn, next phase, ended *ending) (uint64, context.Context) {
	c.gen++
	if c.cancel != nil {
		c.cancel()
	}
	if c.retry != nil {
		c.retry.Stop()
		c.retry = nil
	}
	if c.session != nil {
		ended.sessions = append(ended.sessions, c.session)
	}
	if c.auth != nil {
		// Abandoned under s.mu, which park holds to register the attempt:
		// a sign-in superseded before it registered ends itself.
		c.auth.abandon()
		if c.auth.state != "" && s.attempts[c.auth.state] == c.auth {
			delete(s.attempts, c.auth.state)
			// Ended in the store before the supersede returns, so no replica
			// takes a code for it; its dial winding down would be later.
			ended.signIns = append(ended.signIns, c.auth.state)
		}
		c.auth = nil
	}
	c.session, c.tools, c.phase = nil, nil, next
	ctx, cancel := context.WithCancel(s.root)
	c.cancel = cancel
	return c.gen, ctx
}

// reconnect drops the server's connections — the shared one and every
// person's — and, unless the server is disabled or gone, dials them again
// in the background (a dial finds which of them the row still has).
func (s *Service) reconnect(id string) {
	s.mu.Lock()
	keys := []key{{server: id}}
	for k := range s.conns {
		if k.server == id && k.user != "" {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	for _, k := range keys {
		s.dialAgain(k, true)
	}
}

// disconnect ends the server's connections for good (disabled or
// deleted).
func (s *Service) disconnect(id string) {
	s.disconnectWhere(func(k key) bool { return k.server == id })
}

// disconnectWhere ends for good the connections whose keys match.
func (s *Service) disconnectWhere(match func(key) bool) {
	s.mu.Lock()
	var closed ending
	for k, c := range s.conns {
		if match(k) {
			s.supersede(c, idle, &closed)
			c.cancel()
			delete(s.conns, k)
		}
	}
	s.mu.Unlock()
	s.finish(closed)
}

// ending is what a supersede ended, finished outside s.mu: sessions to
// close, sign-ins to end in the store.
type ending struct {
	sessions []ports.MCPSession
	signIns  []string
}

// finish closes the sessions and ends the sign-ins a supersede ended.
func (s *Service) finish(e ending) {
	closeAll(e.sessions)
	for _, state := range e.signIns {
		if err := s.d.Store.DeleteMCPSignIn(context.WithoutCancel(s.root), state); err != nil {
			s.d.Log.Warn("ending a superseded sign-in in the store failed; it expires by itself", "err", err)
		}
	}
}

func closeAll(sessions []ports.MCPSession) {
	for _, ss := range sessions {
		_ = ss.Close()
	}
}

// dial connects generation gen of the connection and, once up, watches
// the session until it ends. auth, when set, is the interactive sign-in
// the dial may use. A connection the row no longer has (the shared one of
// a server each person signs in to, or the reverse) goes idle.
func (s *Service) dial(ctx context.Context, k key, gen uint64, auth *attempt) {
	id := k.server
	row, err := s.d.Store.FindMCPServer(ctx, id)
	if err != nil || !row.Enabled || row.Config.PerPersonAuth != (k.user != "") {
		s.settle(k, gen, func(c *conn) { c.phase = idle })
		return
	}
	grant, err := s.grantOf(ctx, row, k.user)
	if err != nil {
		s.fail(k, gen, row.Name, err)
		return
	}
	s.settle(k, gen, func(c *conn) { c.grant = grant })
	target, err := s.target(ctx, row, k, grant, auth)
	if err != nil {
		s.fail(k, gen, row.Name, err)
		return
	}
	// A stdio server's program: started by the dial, supervised as any
	// connection is (its exit is a lost connection, redialled with
	// backoff), its stderr logged and kept for the status.
	var tail *stderrTail
	var severed <-chan struct{}
	if row.Config.Stdio() {
		tail = newStderrTail(s.d.Log, row)
		st, release, sev, err := s.program(ctx, row, tail)
		if err != nil {
			s.fail(k, gen, row.Name, err)
			return
		}
		defer release()
		target.Stdio, severed = st, sev
	}
	hctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
	if auth != nil {
		// A person is signing in: wait for them as long as the attempt lives.
		hctx, cancel = context.WithTimeout(ctx, AttemptTTL+HandshakeTimeout)
	}
	defer cancel()
	session, err := s.d.Dialer.Dial(hctx, target)
	if err != nil {
		if auth != nil && ctx.Err() == nil && s.codeDelivered(auth) {
			err = s.notAccepted(k, row, err)
		}
		s.fail(k, gen, row.Name, withStderr(err, tail))
		return
	}
	listed, err := session.ListTools(hctx)
	if err != nil {
		_ = session.Close()
		s.fail(k, gen, row.Name, withStderr(err, tail))
		return
	}
	tools := exposed(row.Name, listed)
	current := false
	s.settle(k, gen, func(c *conn) {
		current = true
		c.phase, c.session, c.tools, c.lastErr, c.needsAuth, c.failures, c.auth = connected, session, tools, "", false, 0, nil
	})
	if !current {
		_ = session.Close()
		return
	}
	s.d.Log.Info("mcp server connected", "server", row.Name, "server_id", id, "tools", len(tools))
	if auth != nil {
		auth.connected()
		if s.codeDelivered(auth) {
			s.d.Log.Info("interactive connect established", "server", row.Name, "server_id", id)
		}
	}
	why := "the connection ended"
	select {
	case <-ctx.Done():
		return // superseded or shutting down: whoever did that closes the session
	case <-session.Done():
		if err := session.Err(); err != nil {
			why = "the connection ended: " + err.Error()
		}
		why += tail.suffix()
	case <-severed:
		why = "its project's sandbox changed or went away: the program starts again in what the project is now"
	}
	s.d.Log.Warn("mcp server connection lost", "server", row.Name, "server_id", id, "err", why)
	s.lost(k, gen, session, why)
}

// lost records that a live session of generation gen ended (or a call
// found it dead) and schedules a redial.
func (s *Service) lost(k key, gen uint64, session ports.MCPSession, why string) {
	s.mu.Lock()
	c := s.conns[k]
	if c == nil || c.gen != gen || c.session != session {
		s.mu.Unlock()
		return
	}
	c.session, c.tools, c.phase, c.lastErr = nil, nil, idle, why
	s.scheduleLocked(k, c)
	s.mu.Unlock()
	_ = session.Close()
}

// fail records a failed dial of generation gen: a missing grant waits for
// a sign-in, a transport failure is retried with backoff, anything else
// waits for the next write or connect.
func (s *Service) fail(k key, gen uint64, name string, err error) {
	var me *ports.MCPError
	kind := ports.MCPProtocol
	if errors.As(err, &me) {
		kind = me.Kind
	}
	s.d.Log.Warn("mcp server connect failed", "server", name, "server_id", k.server, "kind", kind, "err", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conns[k]
	if c == nil || c.gen != gen {
		return
	}
	c.phase, c.lastErr, c.auth = idle, err.Error(), nil
	switch kind {
	case ports.MCPNeedsAuth, ports.MCPAuthFailed:
		c.needsAuth = true
	case ports.MCPUnreachable:
		s.scheduleLocked(k, c)
	}
}

// scheduleLocked redials after the next backoff wait. s.mu is held.
func (s *Service) scheduleLocked(k key, c *conn) {
	if s.root.Err() != nil {
		return
	}
	wait := RetryFirst << min(c.failures, 5)
	wait = min(wait, RetryCap)
	wait = wait/2 + rand.N(wait/2+1) // jitter: half to the whole wait
	c.failures++
	gen := c.gen
	c.retry = time.AfterFunc(wait, func() {
		s.mu.Lock()
		current := s.conns[k] == c && c.gen == gen && c.phase == idle
		s.mu.Unlock()
		if current {
			s.redial(k)
		}
	})
}

// redial dials again after a transport failure, keeping the failure count
// for the backoff.
func (s *Service) redial(k key) { s.dialAgain(k, false) }

// dialAgain supersedes the server's connection and dials a new
// generation in the background. fresh (a write, a connect) starts the
// failure count and the last error over; a redial keeps them, and does
// nothing for a server no longer tracked.
func (s *Service) dialAgain(k key, fresh bool) {
	s.mu.Lock()
	c := s.conns[k]
	if s.root.Err() != nil || (c == nil && !fresh) {
		s.mu.Unlock()
		return
	}
	c = s.connLocked(k)
	var closed ending
	gen, ctx := s.supersede(c, connecting, &closed)
	if fresh {
		c.failures, c.lastErr, c.needsAuth = 0, "", false
	}
	s.mu.Unlock()
	s.finish(closed)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.dial(ctx, k, gen, nil)
	}()
}

// settle applies f to the server's conn if generation gen is still
// current.
func (s *Service) settle(k key, gen uint64, f func(*conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conns[k]; c != nil && c.gen == gen {
		f(c)
	}
}

// target resolves a row into what the dialer needs for connection k,
// secrets opened; grant is the sealed grant k goes through.
func (s *Service) target(ctx context.Context, row domain.MCPServer, k key, grant string, auth *attempt) (ports.MCPTarget, error) {
	t := ports.MCPTarget{ServerID: row.ID, Name: row.Name, Endpoint: row.Config.Endpoint, Headers: map[string]string{}}
	if s.d.Outbound != nil {
		// Judged at every dial: an owner demoted since, or a setting
		// changed, decides the next connection.
		p, err := s.d.Outbound.For(ctx, row.OwnerID)
		if err != nil {
			return t, err
		}
		t.Outbound = p
	}
	for name, sealed := range row.Config.Headers {
		v, err := s.box.Open(headerPlace(row.ID, name), sealed)
		if err != nil {
			return t, err
		}
		t.Headers[name] = v
	}
	if row.Config.AuthMode == domain.MCPAuthOAuth {
		o, err := s.oauthFor(row, k, grant, auth)
		if err != nil {
			return t, err
		}
		t.OAuth = o
	}
	return t, nil
}

// codeDelivered reports whether an interactive attempt got its code.
func (s *Service) codeDelivered(a *attempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.delivered
}

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

// Start connects every enabled server in the background.
func (s *Service) Start(ctx context.Context) error {
	rows, err := s.d.Store.ListMCPServers(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	for _, r := range rows {
		if r.Enabled {
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

// live derives a server's status — the one place it is computed — with
// its last error and its live tools. A row this replica is behind on — an
// enabled server it never dialed (created on another replica), or one
// waiting for a sign-in that another replica's callback has since
// completed (a grant it has not seen) — is dialed now, so every replica
// connects once any one of them signs the server in.
func (s *Service) live(row domain.MCPServer) (domain.MCPStatus, string, []Tool) {
	st, lastErr, tools, behind := s.liveNow(row)
	if !behind {
		return st, lastErr, tools
	}
	s.d.Log.Info("mcp server changed on another replica: connecting", "server", row.Name, "server_id", row.ID)
	s.reconnect(row.ID)
	st, lastErr, tools, _ = s.liveNow(row)
	return st, lastErr, tools
}

// liveNow is live without the catching up: it also reports whether this
// replica is behind the row.
func (s *Service) liveNow(row domain.MCPServer) (_ domain.MCPStatus, _ string, _ []Tool, behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conns[row.ID]
	if c == nil {
		if row.Enabled && s.started && s.root.Err() == nil {
			return domain.MCPConnecting, "", nil, true
		}
		c = &conn{}
	}
	if row.Enabled && c.phase == idle && c.needsAuth && row.Config.AuthMode == domain.MCPAuthOAuth &&
		row.SealedGrant != "" && row.SealedGrant != c.grant && s.started && s.root.Err() == nil {
		return domain.MCPConnecting, "", nil, true
	}
	st, lastErr, tools := derive(row, c)
	return st, lastErr, tools, false
}

// derive derives the status of row whose connection is c. s.mu is held.
func derive(row domain.MCPServer, c *conn) (domain.MCPStatus, string, []Tool) {
	switch {
	case !row.Enabled:
		return domain.MCPDisabled, "", nil
	case c.phase == authorizing:
		return domain.MCPAuthorizing, c.lastErr, nil
	case c.phase == connecting:
		return domain.MCPConnecting, c.lastErr, nil
	case c.phase == connected:
		return domain.MCPConnected, "", append([]Tool{}, c.tools...)
	case row.Config.AuthMode == domain.MCPAuthOAuth && (row.SealedGrant == "" || c.needsAuth):
		return domain.MCPNeedsAuth, c.lastErr, nil
	}
	return domain.MCPDisconnected, c.lastErr, nil
}

// connLocked returns the server's conn, made on first use. s.mu is held.
func (s *Service) connLocked(id string) *conn {
	c := s.conns[id]
	if c == nil {
		c = &conn{}
		s.conns[id] = c
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

// reconnect drops the server's connection and, unless the server is
// disabled or gone, dials it again in the background.
func (s *Service) reconnect(id string) { s.dialAgain(id, true) }

// disconnect ends the server's connection for good (disabled or deleted).
func (s *Service) disconnect(id string) {
	s.mu.Lock()
	c := s.conns[id]
	var closed ending
	if c != nil {
		s.supersede(c, idle, &closed)
		c.cancel()
		delete(s.conns, id)
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

// dial connects generation gen of the server and, once up, watches the
// session until it ends. auth, when set, is the interactive sign-in the
// dial may use.
func (s *Service) dial(ctx context.Context, id string, gen uint64, auth *attempt) {
	row, err := s.d.Store.FindMCPServer(ctx, id)
	if err != nil || !row.Enabled {
		s.settle(id, gen, func(c *conn) { c.phase = idle })
		return
	}
	s.settle(id, gen, func(c *conn) { c.grant = row.SealedGrant })
	target, err := s.target(ctx, row, auth)
	if err != nil {
		s.fail(id, gen, row.Name, err)
		return
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
			err = s.notAccepted(id, row.Name, err)
		}
		s.fail(id, gen, row.Name, err)
		return
	}
	listed, err := session.ListTools(hctx)
	if err != nil {
		_ = session.Close()
		s.fail(id, gen, row.Name, err)
		return
	}
	tools := exposed(row.Name, listed)
	current := false
	s.settle(id, gen, func(c *conn) {
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
	select {
	case <-ctx.Done():
		return // superseded or shutting down: whoever did that closes the session
	case <-session.Done():
	}
	why := "the connection ended"
	if err := session.Err(); err != nil {
		why = "the connection ended: " + err.Error()
	}
	s.d.Log.Warn("mcp server connection lost", "server", row.Name, "server_id", id, "err", why)
	s.lost(id, gen, session, why)
}

// lost records that a live session of generation gen ended (or a call
// found it dead) and schedules a redial.
func (s *Service) lost(id string, gen uint64, session ports.MCPSession, why string) {
	s.mu.Lock()
	c := s.conns[id]
	if c == nil || c.gen != gen || c.session != session {
		s.mu.Unlock()
		return
	}
	c.session, c.tools, c.phase, c.lastErr = nil, nil, idle, why
	s.scheduleLocked(id, c)
	s.mu.Unlock()
	_ = session.Close()
}

// fail records a failed dial of generation gen: a missing grant waits for
// a sign-in, a transport failure is retried with backoff, anything else
// waits for the next write or connect.
func (s *Service) fail(id string, gen uint64, name string, err error) {
	var me *ports.MCPError
	kind := ports.MCPProtocol
	if errors.As(err, &me) {
		kind = me.Kind
	}
	s.d.Log.Warn("mcp server connect failed", "server", name, "server_id", id, "kind", kind, "err", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conns[id]
	if c == nil || c.gen != gen {
		return
	}
	c.phase, c.lastErr, c.auth = idle, err.Error(), nil
	switch kind {
	case ports.MCPNeedsAuth, ports.MCPAuthFailed:
		c.needsAuth = true
	case ports.MCPUnreachable:
		s.scheduleLocked(id, c)
	}
}

// scheduleLocked redials after the next backoff wait. s.mu is held.
func (s *Service) scheduleLocked(id string, c *conn) {
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
		current := s.conns[id] == c && c.gen == gen && c.phase == idle
		s.mu.Unlock()
		if current {
			s.redial(id)
		}
	})
}

// redial dials again after a transport failure, keeping the failure count
// for the backoff.
func (s *Service) redial(id string) { s.dialAgain(id, false) }

// dialAgain supersedes the server's connection and dials a new
// generation in the background. fresh (a write, a connect) starts the
// failure count and the last error over; a redial keeps them, and does
// nothing for a server no longer tracked.
func (s *Service) dialAgain(id string, fresh bool) {
	s.mu.Lock()
	c := s.conns[id]
	if s.root.Err() != nil || (c == nil && !fresh) {
		s.mu.Unlock()
		return
	}
	c = s.connLocked(id)
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
		s.dial(ctx, id, gen, nil)
	}()
}

// settle applies f to the server's conn if generation gen is still
// current.
func (s *Service) settle(id string, gen uint64, f func(*conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conns[id]; c != nil && c.gen == gen {
		f(c)
	}
}

// target resolves a row into what the dialer needs, secrets opened.
func (s *Service) target(ctx context.Context, row domain.MCPServer, auth *attempt) (ports.MCPTarget, error) {
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
		o, err := s.oauthFor(row, auth)
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

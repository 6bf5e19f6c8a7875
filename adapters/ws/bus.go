// Package ws serves the WebSocket event bus (/ws): first-message
// authentication, every run of the caller streamed to every one of their
// connections, and the client's run commands.
package ws

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
)

// Protocol limits.
const (
	MaxFrame     = 1 << 20 // an inbound frame past this closes the socket with 1009
	PingEvery    = 25 * time.Second
	PongTimeout  = 60 * time.Second
	authDeadline = 15 * time.Second
	writeTimeout = 10 * time.Second
)

// Deps are the services the bus calls.
type Deps struct {
	Auth *auth.Service
	Runs *runs.Service
	// Budget is the failed-authentication budget shared with the REST API;
	// nil applies none.
	Budget AuthBudget
	// Streams registers every signed-in connection, so a revoked credential
	// closes it and the per-user cap bounds them.
	Streams *livestreams.Registry
	Log     *slog.Logger
}

// Bus is the /ws endpoint.
type Bus struct {
	d        Deps
	signIn   signIn
	upgrader websocket.Upgrader
	open     tracker[*conn]
}

// New returns the bus.
func New(d Deps) *Bus {
	return &Bus{d: d, signIn: signIn{auth: d.Auth, budget: d.Budget, streams: d.Streams}, upgrader: websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}}
}

// ServeHTTP upgrades and serves one connection until it closes.
func (b *Bus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.open.closed(w) || !b.signIn.admit(w, r) {
		return
	}
	ws, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	c := &conn{bus: b, ws: ws, subs: map[string]*hub.Subscription{}}
	// The request's values (the embedding host's sign-in) without its
	// lifetime: the connection outlives the handshake.
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	b.open.add(c)
	defer b.open.remove(c)
	c.serve(r)
}

// CloseAll closes every connection with 1001 (going away), for shutdown.
func (b *Bus) CloseAll() {
	for _, c := range b.open.drain() {
		c.close(websocket.CloseGoingAway, "server shutting down")
	}
}

// Envelope is the frame every message travels in.
type Envelope struct {
	Type    string          `json:"type"`
	Seq     int64           `json:"seq,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// conn is one authenticated connection.
type conn struct {
	bus    *Bus
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	token  string
	p      domain.Principal
	stream *livestreams.Stream // set once signed in

	writeMu sync.Mutex
	mu      sync.Mutex
	subs    map[string]*hub.Subscription
	closed  bool
}

func (c *conn) serve(r *http.Request) {
	defer c.cancel()
	defer c.ws.Close()
	c.ws.SetReadLimit(MaxFrame)
	if !c.authenticate(r) {
		return
	}
	defer c.stream.Release()
	c.ws.SetReadDeadline(time.Now().Add(PongTimeout))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(PongTimeout)) })
	go c.ping()
	go c.follow()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return // gone, timed out, or over the frame limit (gorilla sent 1009)
		}
		c.ws.SetReadDeadline(time.Now().Add(PongTimeout))
		// Every frame re-checks the token: a revoked token or a disabled
		// user loses the connection at once.
		if err := c.bus.d.Auth.Recheck(c.ctx, c.token, c.p); err != nil {
			c.close(websocket.ClosePolicyViolation, "authentication revoked")
			return
		}
		c.handle(data)
	}
}

// authenticate waits for the auth message and answers auth.ok, or an
// error and a close: 1008 for a bad credential, the register's close code
// when it refuses the connection (1013 past max_streams_per_user). A
// registered connection is closed 1008 with the reason the moment its
// credential stops being valid.
func (c *conn) authenticate(r *http.Request) bool {
	token, p, code, msg := c.bus.signIn.first(c.ctx, c.ws, r)
	if code != "" {
		c.sendError(code, msg)
		c.close(websocket.ClosePolicyViolation, msg)
		return false
	}
	stream, refused := c.bus.signIn.register(c.ctx, p, func(reason string) { c.close(websocket.ClosePolicyViolation, reason) })
	if refused != nil {
		c.sendError(refused.code, refused.message)
		c.close(refused.closeCode, refused.closeReason)
		return false
	}
	c.token, c.p, c.stream = token, p, stream
	// What the connection does is recorded as its person's, from its
	// direct peer's address.
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	c.ctx = ports.WithActor(c.ctx, domain.UserActor(p.User, addr))
	if c.send(Envelope{Type: "auth.ok"}) != nil {
		stream.Release()
		return false
	}
	return true
}

// ping keeps the connection honest: a peer that answers no ping within
// PongTimeout is dropped by the read deadline.
func (c *conn) ping() {
	t := time.NewTicker(PingEvery)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			c.writeMu.Lock()
			err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout))
			c.writeMu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// follow attaches the connection to every live run of its user, and to each
// one that starts or resumes later, whichever connection started it.
func (c *conn) follow() {
	w := c.bus.d.Runs.Hub().Watch(c.p.User.ID)
	defer w.Close()
	for _, id := range c.bus.d.Runs.Hub().LiveRuns(c.p.User.ID) {
		c.attach(id, 0, false)
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-w.Wake():
			for _, id := range w.Take() {
				c.attach(id, 0, false)
			}
			for _, ev := range w.TakeNotices() {
				if c.write(ev.Envelope()) != nil {
					return
				}
			}
		}
	}
}

// attach subscribes to a run from a cursor; replace drops an existing
// subscription first (run.subscribe), otherwise an attached run is kept.
func (c *conn) attach(runID string, from int64, replace bool) error {
	c.mu.Lock()
	if old, ok := c.subs[runID]; ok {
		if !replace {
			c.mu.Unlock()
			return nil
		}
		old.Close()
		delete(c.subs, runID)
	}
	c.mu.Unlock()
	sub, err := c.bus.d.Runs.Subscribe(c.ctx, c.p, runID, from)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		sub.Close()
		return nil
	}
	c.subs[runID] = sub
	c.mu.Unlock()
	go c.pump(sub)
	return nil
}

// pump forwards one subscription's events until its run ends or the
// connection goes; a slow socket makes the subscription gap, not the run wait.
func (c *conn) pump(sub *hub.Subscription) {
	defer func() {
		c.mu.Lock()
		if c.subs[sub.RunID()] == sub {
			delete(c.subs, sub.RunID())
		}
		c.mu.Unlock()
		sub.Close()
	}()
	var frame []byte // reused: WriteMessage copies it out before the next
	for {
		ev, err := sub.Next(c.ctx)
		if err != nil {
			return
		}
		frame = ev.AppendEnvelope(frame[:0])
		if c.write(frame) != nil {
			return
		}
	}
}

func (c *conn) send(env Envelope) error {
	data, err := json.Marshal(env)
	if err != nil {
		return err
	}
	return c.write(data)
}

func (c *conn) write(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

func (c *conn) sendError(code, message string) {
	payload, _ := json.Marshal(map[string]string{"code": code, "message": message})
	_ = c.send(Envelope{Type: "error", Payload: payload})
}

// close sends a close frame with code and ends the connection.
func (c *conn) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.writeMu.Lock()
	err := c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	c.writeMu.Unlock()
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
		c.bus.d.Log.Debug("closing a websocket", "err", err)
	}
	c.cancel()
	c.ws.Close()
}

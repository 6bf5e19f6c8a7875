package ws

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/ports"
)

// openDeadline bounds how long a terminal may take to start: provisioning
// a container (and, on a remote daemon, dialing it) happens here.
const openDeadline = 5 * time.Minute

// Terminal is the /ws/terminal endpoint: one interactive shell in a
// project's container per connection. Binary frames carry the bytes both
// ways; text frames carry the JSON control messages.
type Terminal struct {
	signIn    signIn
	sandboxes *sandboxes.Service
	log       *slog.Logger
	upgrader  websocket.Upgrader
	open      tracker[*terminalConn]
}

// NewTerminal returns the endpoint; budget (nil for none) is the
// failed-authentication budget shared with the REST API, streams the
// register every signed-in terminal counts in.
func NewTerminal(a *auth.Service, s *sandboxes.Service, budget AuthBudget, streams *livestreams.Registry, log *slog.Logger) *Terminal {
	return &Terminal{signIn: signIn{auth: a, budget: budget, streams: streams}, sandboxes: s, log: log,
		upgrader: websocket.Upgrader{ReadBufferSize: 32 << 10, WriteBufferSize: 32 << 10}}
}

type terminalOpen struct {
	ProjectID string `json:"project_id"`
	Cols      uint   `json:"cols"`
	Rows      uint   `json:"rows"`
}

type terminalConn struct {
	ws      *websocket.Conn
	writeMu sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
}

func (t *terminalConn) send(typ string, payload any) error {
	raw, _ := json.Marshal(payload)
	data, _ := json.Marshal(Envelope{Type: typ, Payload: raw})
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return t.ws.WriteMessage(websocket.TextMessage, data)
}

func (t *terminalConn) bytes(b []byte) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return t.ws.WriteMessage(websocket.BinaryMessage, b)
}

func (t *terminalConn) close(code int, reason string) {
	t.writeMu.Lock()
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	t.writeMu.Unlock()
	t.cancel()
	t.ws.Close()
}

// fail answers terminal.error and closes.
func (t *terminalConn) fail(code, message string) {
	_ = t.send("terminal.error", map[string]string{"code": code, "message": message})
	t.close(websocket.CloseNormalClosure, "terminal not opened")
}

// ServeHTTP upgrades and serves one terminal until its shell exits or the
// client goes.
func (term *Terminal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if term.open.closed(w) || !term.signIn.admit(w, r) {
		return
	}
	ws, err := term.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	t := &terminalConn{ws: ws}
	t.ctx, t.cancel = context.WithCancel(context.WithoutCancel(r.Context())) // the request's values, not its lifetime
	term.open.add(t)
	defer func() {
		term.open.remove(t)
		t.cancel()
		ws.Close()
	}()
	term.serve(t, r)
}

func (term *Terminal) serve(t *terminalConn, r *http.Request) {
	t.ws.SetReadLimit(MaxFrame)
	token, p, code, msg := term.signIn.first(t.ctx, t.ws, r)
	if code != "" {
		_ = t.send("error", map[string]string{"code": code, "message": msg})
		t.close(websocket.ClosePolicyViolation, msg)
		return
	}
	// A terminal counts as one of its user's streams, and closes 1008 the
	// moment the credential that opened it stops being valid.
	stream, refused := term.signIn.register(t.ctx, p, func(reason string) { t.close(websocket.ClosePolicyViolation, reason) })
	if refused != nil {
		_ = t.send("error", map[string]string{"code": refused.code, "message": refused.message})
		t.close(refused.closeCode, refused.closeReason)
		return
	}
	defer stream.Release()
	if t.send("auth.ok", nil) != nil {
		return
	}
	t.ws.SetReadDeadline(time.Now().Add(authDeadline))
	typ, data, err := t.ws.ReadMessage()
	if err != nil {
		return
	}
	var env Envelope
	var open terminalOpen
	if typ != websocket.TextMessage || json.Unmarshal(data, &env) != nil || env.Type != "terminal.open" ||
		json.Unmarshal(env.Payload, &open) != nil || open.ProjectID == "" {
		t.fail("validation", `the first message after auth must be {"type":"terminal.open","payload":{"project_id":…,"cols":…,"rows":…}}`)
		return
	}
	cols, rows := open.Cols, open.Rows
	if cols == 0 || cols > 1000 {
		cols = 80
	}
	if rows == 0 || rows > 1000 {
		rows = 24
	}
	// A foreign project reads as absent; an admin reaches any.
	if _, err := term.sandboxes.GetProject(t.ctx, p, open.ProjectID); err != nil {
		t.fail(string(errs.CodeOf(err)), errs.MessageOf(err))
		return
	}
	// Provisioning may take a while: no pongs are read meanwhile.
	t.ws.SetReadDeadline(time.Time{})
	octx, cancel := context.WithTimeout(t.ctx, openDeadline)
	lease, err := term.sandboxes.Acquire(octx, open.ProjectID, sandboxes.ForTerminal)
	if err != nil {
		cancel()
		t.fail(string(errs.CodeOf(err)), errs.MessageOf(err))
		return
	}
	defer lease.Release()
	pty, err := lease.OpenPTY(octx, cols, rows)
	cancel()
	if err != nil {
		t.fail(string(errs.CodeOf(err)), errs.MessageOf(err))
		return
	}
	defer pty.Close()
	if t.send("terminal.ready", map[string]any{"project_id": open.ProjectID, "cols": cols, "rows": rows}) != nil {
		return
	}
	t.ws.SetReadDeadline(time.Now().Add(PongTimeout))
	t.ws.SetPongHandler(func(string) error { return t.ws.SetReadDeadline(time.Now().Add(PongTimeout)) })
	go term.keepAlive(t, token, p)
	go func() {
		select {
		case <-lease.Severed():
			_ = t.send("terminal.error", map[string]string{"code": "conflict",
				"message": "the project's environment or its sandbox changed: the container is being replaced; open a new terminal"})
			t.close(websocket.CloseNormalClosure, "sandbox changed")
		case <-t.ctx.Done():
		}
	}()
	// A client gone or a sever ends the shell: closing the PTY unblocks
	// the output copy.
	go func() {
		<-t.ctx.Done()
		pty.Close()
	}()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		term.output(t, pty)
	}()
	go term.input(t, pty)
	<-exited
	if t.ctx.Err() != nil {
		return
	}
	code2, err := pty.Wait()
	if err != nil {
		code2 = -1
	}
	// The shell is over: the project is free before the client hears so,
	// so a stop it sends next is not deferred behind this terminal.
	pty.Close()
	lease.Release()
	_ = t.send("terminal.exit", map[string]int{"code": code2})
	t.close(websocket.CloseNormalClosure, "shell exited")
}

// output copies the shell's output to binary frames until it ends.
func (term *Terminal) output(t *terminalConn, pty ports.PTY) {
	buf := make([]byte, 32<<10)
	for {
		n, err := pty.Read(buf)
		if n > 0 {
			if t.bytes(buf[:n]) != nil {
				t.cancel()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// input feeds binary frames to the shell and applies resizes.
func (term *Terminal) input(t *terminalConn, pty ports.PTY) {
	defer t.cancel()
	for {
		typ, data, err := t.ws.ReadMessage()
		if err != nil {
			return
		}
		t.ws.SetReadDeadline(time.Now().Add(PongTimeout))
		if typ == websocket.BinaryMessage {
			if _, err := pty.Write(data); err != nil {
				return
			}
			continue
		}
		var env Envelope
		if json.Unmarshal(data, &env) != nil {
			continue
		}
		if env.Type == "terminal.resize" {
			var sz struct {
				Cols uint `json:"cols"`
				Rows uint `json:"rows"`
			}
			if json.Unmarshal(env.Payload, &sz) == nil && sz.Cols > 0 && sz.Rows > 0 && sz.Cols <= 1000 && sz.Rows <= 1000 {
				if err := pty.Resize(sz.Cols, sz.Rows); err != nil {
					term.log.Debug("terminal resize failed", "err", err)
				}
			}
		}
	}
}

// keepAlive pings, and re-checks the token with every ping: a revoked
// token or a disabled user loses the terminal.
func (term *Terminal) keepAlive(t *terminalConn, token string, p domain.Principal) {
	tick := time.NewTicker(PingEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
			if err := term.signIn.auth.Recheck(t.ctx, token, p); err != nil {
				t.close(websocket.ClosePolicyViolation, "authentication revoked")
				return
			}
			t.writeMu.Lock()
			err := t.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout))
			t.writeMu.Unlock()
			if err != nil {
				t.cancel()
				return
			}
		}
	}
}

// CloseAll closes every terminal with 1001 (going away), for shutdown.
func (term *Terminal) CloseAll() {
	for _, c := range term.open.drain() {
		c.close(websocket.CloseGoingAway, "server shutting down")
	}
}

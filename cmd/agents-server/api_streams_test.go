package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// Open streams answer to the credential that opened them: a revoked token,
// a disabled, deleted or demoted user, an expired token each end them; and
// one account holds at most max_streams_per_user of them.

// streamDeadline bounds every wait for a stream to end. It is generous: a
// stream that has not ended by then never will (the slow model talks for
// minutes), and no test reads anything into how long the end took.
const streamDeadline = 60 * time.Second

// slowModel serves a model that talks for minutes, so a run stays live for
// as long as a test needs it; the session's title call is answered at once
// (it is not the run's, and would outlive the test).
func slowModel(t *testing.T) string {
	t.Helper()
	model, url := startScripted(t)
	model.SetScript("slow", scripted.Script{Exchanges: []scripted.Exchange{
		{When: models.TitlePrefix, Steps: []scripted.Step{{Text: "Small talk"}}},
		{Steps: []scripted.Step{{Text: strings.Repeat("still talking ", 1000), ChunkSize: 1, DelayMS: 20}}},
	}})
	return url
}

// liveRun starts a run of the slow model as token's user (once per user:
// it creates their provider) and returns its id.
func (h *harness) liveRun(token, url string) string {
	h.t.Helper()
	agent := h.agentOn(token, protocols(url)["openai-responses"], map[string]any{"name": "slow", "model": "slow"})
	s := h.createSession(token, map[string]any{"agent_config_id": agent})
	return h.startRun(token, s.ID, map[string]any{"input": "talk"})
}

// followed opens an SSE stream on a live run and reads its first event,
// so the stream is known to be attached.
func (h *harness) followed(token, runID string) *sseStream {
	h.t.Helper()
	s := h.openSSE(token, runID, 0)
	if ev, ok := s.next(h.t); !ok || ev.Type != domain.EventRunStarted {
		h.t.Fatalf("first event %+v (ok %v)", ev, ok)
	}
	return s
}

// listening dials /ws and reads until an event of runID arrives (the bus
// attaches every live run of the user).
func (h *harness) listening(token, runID string) *wsClient {
	h.t.Helper()
	c := h.dialWS(token)
	for {
		ev := c.read()
		if strings.Contains(string(ev.Payload), runID) {
			return c
		}
	}
}

// streamEnd is how an SSE stream ended: after a final event, or with the
// closing comment naming why the server ended it.
type streamEnd struct {
	final  bool
	reason string
}

// endOf reads an SSE stream to its end, failing if it is still open at
// the deadline.
func endOf(t *testing.T, s *sseStream) streamEnd {
	t.Helper()
	done := make(chan streamEnd, 1)
	go func() {
		var end streamEnd
		for {
			line, err := s.rd.ReadString('\n')
			if err != nil {
				done <- end
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, ": closed: "):
				end.reason = strings.TrimPrefix(line, ": closed: ")
			case strings.HasPrefix(line, "event: "):
				end.final = end.final || domain.Event{Type: strings.TrimPrefix(line, "event: ")}.Final()
			}
		}
	}()
	select {
	case end := <-done:
		return end
	case <-time.After(streamDeadline):
		t.Fatal("the event stream is still open")
		return streamEnd{}
	}
}

// wantCut fails unless the SSE stream ended before its run did, saying why.
func wantCut(t *testing.T, s *sseStream, reason string) {
	t.Helper()
	if end := endOf(t, s); end.final || end.reason != reason {
		t.Fatalf("the stream ended with final=%v reason=%q, want the run still going and reason %q", end.final, end.reason, reason)
	}
}

// closeOf reads a socket until its close frame and returns its code and
// reason, failing if it is still open at the deadline.
func closeOf(t *testing.T, c *websocket.Conn) (int, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(streamDeadline))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("the socket ended without a close frame: %v", err)
		}
		return ce.Code, ce.Text
	}
}

// wantClosed fails unless the socket closes with code and reason.
func wantClosed(t *testing.T, c *wsClient, code int, reason string) {
	t.Helper()
	if gotCode, gotReason := closeOf(t, c.ws); gotCode != code || gotReason != reason {
		t.Fatalf("closed %d %q, want %d %q", gotCode, gotReason, code, reason)
	}
}

// stillStreaming fails unless a few more events of the live run arrive on
// both transports.
func stillStreaming(t *testing.T, s *sseStream, c *wsClient) {
	t.Helper()
	for range 5 {
		if ev, ok := s.next(t); !ok || ev.Event.Final() {
			t.Fatalf("the stream ended (%+v, ok %v)", ev, ok)
		}
		c.read()
	}
}

func TestDisablingOrDeletingAUserEndsTheirOpenStreams(t *testing.T) {
	t.Parallel()
	url := slowModel(t)
	h := startServer(t, testConfig(t))
	deeID := h.createUser("dee", "password-dee", "member")
	dee := h.login("dee", "password-dee")
	run := h.liveRun(dee, url)
	sse, bus := h.followed(dee, run), h.listening(dee, run)
	eveID := h.createUser("eve", "password-eve", "member")
	eve := h.dialWS(h.login("eve", "password-eve"))
	// Someone else's streams are not theirs to lose.
	bob := h.member("bob")
	bobRun := h.liveRun(bob, url)
	bobSSE, bobBus := h.followed(bob, bobRun), h.listening(bob, bobRun)

	term := h.signedInTerminal(dee)

	h.call("PATCH", "/api/v1/auth/users/"+deeID, h.admin, map[string]any{"disabled": true}).want(t, 204)
	wantCut(t, sse, "account disabled")
	wantClosed(t, bus, websocket.ClosePolicyViolation, "account disabled")
	wantClosed(t, term, websocket.ClosePolicyViolation, "account disabled")

	h.call("DELETE", "/api/v1/auth/users/"+eveID, h.admin, nil).want(t, 204)
	wantClosed(t, eve, websocket.ClosePolicyViolation, "account deleted")

	stillStreaming(t, bobSSE, bobBus)
}

func TestDeletingATokenEndsOnlyThatTokensStreams(t *testing.T) {
	t.Parallel()
	url := slowModel(t)
	h := startServer(t, testConfig(t))
	h.createUser("tia", "password-tia", "member")
	session := h.login("tia", "password-tia")
	var pat httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", session, map[string]any{"name": "script"}).want(t, 201).decode(t, &pat)
	run := h.liveRun(session, url)
	patSSE, patBus := h.followed(pat.Token, run), h.listening(pat.Token, run)
	sessSSE, sessBus := h.followed(session, run), h.listening(session, run)

	h.call("DELETE", "/api/v1/auth/tokens/"+pat.ID, session, nil).want(t, 204)
	wantCut(t, patSSE, "token revoked")
	wantClosed(t, patBus, websocket.ClosePolicyViolation, "token revoked")
	stillStreaming(t, sessSSE, sessBus)

	// Signing out revokes the session token, and so ends its streams too.
	h.call("POST", "/api/v1/auth/logout", session, nil).want(t, 204)
	wantCut(t, sessSSE, "signed out")
	wantClosed(t, sessBus, websocket.ClosePolicyViolation, "signed out")
}

func TestDemotingAnAdminEndsTheirStreams(t *testing.T) {
	t.Parallel()
	url := slowModel(t)
	h := startServer(t, testConfig(t))
	adaID := h.createUser("ada", "password-ada", "admin")
	ada := h.login("ada", "password-ada")
	run := h.liveRun(ada, url)
	sse, bus := h.followed(ada, run), h.listening(ada, run)

	h.call("PATCH", "/api/v1/auth/users/"+adaID, h.admin, map[string]string{"role": "member"}).want(t, 204)
	wantCut(t, sse, "role changed")
	wantClosed(t, bus, websocket.ClosePolicyViolation, "role changed")
	// The token still signs in, now as a member.
	h.listening(ada, run)
	h.call("GET", "/api/v1/auth/users", ada, nil).wantErr(t, 403, "forbidden")
}

func TestAnExpiredPersonalTokenLosesItsStreams(t *testing.T) {
	t.Parallel()
	url := slowModel(t)
	cfg := testConfig(t)
	clock := &lockedClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	cfg.Clock = clock
	h := startServer(t, cfg)
	session := h.member("pam")
	var pat httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", session, map[string]any{"name": "ci", "expires_in_days": 1}).want(t, 201).decode(t, &pat)
	run := h.liveRun(session, url)
	patSSE, patBus := h.followed(pat.Token, run), h.listening(pat.Token, run)
	sessSSE, sessBus := h.followed(session, run), h.listening(session, run)

	if n, err := workbenchparts.Of(h.app.wb).Streams.Sweep(context.Background()); n != 0 || err != nil {
		t.Fatalf("a sweep before the expiry closed %d: %v", n, err)
	}
	clock.Add(25 * time.Hour)
	// The server's own sweep runs on a ticker; the test runs one now.
	if _, err := workbenchparts.Of(h.app.wb).Streams.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantCut(t, patSSE, "token expired")
	wantClosed(t, patBus, websocket.ClosePolicyViolation, "token expired")
	// The session token slides: a day is far from its idle expiry.
	stillStreaming(t, sessSSE, sessBus)
}

// trySSE opens a run's event stream, returning it on 200 and otherwise the
// refusal, validated against the document like every other answer.
func (h *harness) trySSE(token, runID string) (*sseStream, reply) {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+"/api/v1/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		h.t.Cleanup(func() { resp.Body.Close() })
		return &sseStream{resp: resp, rd: bufio.NewReaderSize(resp.Body, 1<<16), events: h.eventSchema()}, reply{Status: resp.StatusCode, Header: resp.Header}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
	h.validate(req, nil, r)
	return nil, r
}

// tryWS dials a WebSocket endpoint (/ws or /ws/terminal) and
// authenticates; it returns the socket on auth.ok, and otherwise the error
// frame's code and the close frame's code.
func (h *harness) tryWS(path, token string) (*wsClient, string, int) {
	h.t.Helper()
	ws, _, err := websocketDial("ws" + strings.TrimPrefix(h.base, "http") + path)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { ws.Close() })
	c := &wsClient{t: h.t, ws: ws}
	if path == "/ws" {
		c.events = h.eventSchema()
	}
	c.send("auth", map[string]any{}, "token", token)
	ev := c.read()
	if ev.Type == "auth.ok" {
		return c, "", 0
	}
	if ev.Type != "error" {
		h.t.Fatalf("auth answered %+v", ev)
	}
	code, _ := closeOf(h.t, ws)
	return nil, payload[struct {
		Code string `json:"code"`
	}](h.t, ev).Code, code
}

// signedInTerminal is a /ws/terminal socket past auth.ok, before it opens
// a shell: already one of its user's streams, and no sandbox needed.
func (h *harness) signedInTerminal(token string) *wsClient {
	h.t.Helper()
	c, code, _ := h.tryWS("/ws/terminal", token)
	if c == nil {
		h.t.Fatalf("terminal sign-in refused: %s", code)
	}
	return c
}

// eventually retries open until it reports success, bounded by the
// deadline: a closed stream's slot frees as soon as the server sees it
// gone, which a client only learns by trying.
func eventually(t *testing.T, what string, open func() bool) {
	t.Helper()
	deadline := time.Now().Add(streamDeadline)
	for !open() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still refused", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenStreamsPerUserAreCapped(t *testing.T) {
	t.Parallel()
	url := slowModel(t)
	h := startServer(t, testConfig(t))
	h.call("PUT", "/api/v1/settings/max_streams_per_user", h.admin, map[string]string{"value": "2"}).want(t, 200)
	h.call("PUT", "/api/v1/settings/max_streams_per_user", h.admin, map[string]string{"value": "0"}).wantErr(t, 400, "validation")
	tok := h.member("cap")
	run := h.liveRun(tok, url)
	first, second := h.followed(tok, run), h.followed(tok, run)

	_, refused := h.trySSE(tok, run)
	refused.wantErr(t, 429, "rate_limited")
	if secs, err := strconv.Atoi(refused.Header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", refused.Header.Get("Retry-After"))
	}
	for _, path := range []string{"/ws", "/ws/terminal"} {
		if c, code, closeCode := h.tryWS(path, tok); c != nil || code != "rate_limited" || closeCode != websocket.CloseTryAgainLater {
			t.Fatalf("a third socket on %s: code %q close %d", path, code, closeCode)
		}
	}
	// The cap is per account.
	other := h.member("other")
	h.dialWS(other)
	h.dialWS(other)

	// A closed stream frees its slot, for either transport.
	first.close()
	var third *sseStream
	eventually(t, "an event stream after one closed", func() bool {
		third, _ = h.trySSE(tok, run)
		return third != nil
	})
	if _, refused := h.trySSE(tok, run); refused.Status != 429 {
		t.Fatalf("a slot freed twice: %d", refused.Status)
	}
	second.close()
	eventually(t, "a socket after a stream closed", func() bool {
		c, _, _ := h.tryWS("/ws", tok)
		return c != nil
	})
}

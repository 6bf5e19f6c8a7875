package mcp_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/ports"
)

func TestConnectingWhileDialingThenConnectedWithTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("files", "read", "write")
	release := e.Hold()
	s := h.create(alice, domain.ScopePrivate, headerInput("files"))
	eventually(t, "the dial starts", func() bool { return len(e.Targets()) == 1 })
	if got := h.get(s.ID); got.Status != domain.MCPConnecting || len(got.Tools) != 0 {
		t.Errorf("while the dial is held: status %s, tools %v; want connecting, none", got.Status, got.Tools)
	}
	release()
	got := h.waitStatus(s.ID, domain.MCPConnected)
	if got.LastError != "" {
		t.Errorf("connected with last_error %q", got.LastError)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name+"="+tl.Tool)
	}
	if strings.Join(names, ",") != "files__read=read,files__write=write" {
		t.Errorf("tools = %v, want prefixed names of the listed tools", names)
	}
	if got.Tools[0].Description != "does read" || string(got.Tools[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("tool = %+v, want the server's description and schema", got.Tools[0])
	}
}

func TestToolNamesAreMadeSafe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("x", 80)
	e := h.dialer.Endpoint(endpointURL("weird"))
	e.SetTools(
		ports.MCPTool{Name: "get.weather"},
		ports.MCPTool{Name: "get_weather"}, // collides with the one above once made safe
		ports.MCPTool{Name: "héllo wörld"},
		ports.MCPTool{Name: long},
		ports.MCPTool{Name: long + "y"}, // same cut prefix, another tool
	)
	s := h.create(alice, domain.ScopePrivate, headerInput("weird"))
	got := h.waitStatus(s.ID, domain.MCPConnected)
	if len(got.Tools) != 5 {
		t.Fatalf("tools = %+v, want 5", got.Tools)
	}
	valid := regexp.MustCompile(`^weird__[A-Za-z0-9_-]+$`)
	seen := map[string]string{}
	for _, tl := range got.Tools {
		if !valid.MatchString(tl.Name) || len(tl.Name) > 64 {
			t.Errorf("tool %q is exposed as %q: want [A-Za-z0-9_-], at most 64", tl.Tool, tl.Name)
		}
		if prev, dup := seen[tl.Name]; dup {
			t.Errorf("tools %q and %q share the name %q", prev, tl.Tool, tl.Name)
		}
		seen[tl.Name] = tl.Tool
		if len(tl.InputSchema) == 0 {
			t.Errorf("tool %q has no input schema, want an empty object schema", tl.Tool)
		}
	}
	byTool := map[string]string{}
	for n, tool := range seen {
		byTool[tool] = n
	}
	if byTool["get.weather"] != "weird__get_weather" || byTool["héllo wörld"] != "weird__h_llo_w_rld" {
		t.Errorf("names = %v", byTool)
	}
	hashed := regexp.MustCompile(`_[0-9a-f]{8}$`)
	for _, tool := range []string{"get_weather", long, long + "y"} {
		if n := byTool[tool]; !hashed.MatchString(n) {
			t.Errorf("%q is exposed as %q, want a hash suffix", tool, n)
		}
	}
	if n := byTool[long]; len(n) != 64 || !strings.HasPrefix(n, "weird__xxxx") {
		t.Errorf("a too long name became %q (%d), want it cut to 64 with a hash", n, len(n))
	}
}

func TestTransportFailureRedialsByItself(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("flaky", "ping")
	e.FailDials(unreachable("dial tcp: connection refused"))
	s := h.create(alice, domain.ScopePrivate, headerInput("flaky"))
	got := h.waitStatus(s.ID, domain.MCPDisconnected)
	if !strings.Contains(got.LastError, "connection refused") {
		t.Errorf("last_error = %q, want the dial's error", got.LastError)
	}
	dials := len(e.Targets())
	e.FailDials(nil)
	// No write, no Connect: the backoff redials (the first wait is
	// RetryFirst, jittered down to half of it).
	h.until(s.ID, "connected by a redial", func(s mcp.Server) bool { return s.Status == domain.MCPConnected && s.LastError == "" })
	if len(e.Targets()) <= dials {
		t.Errorf("connected without a redial: %d dials", len(e.Targets()))
	}
}

func TestKilledSessionRedials(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("live", "ping")
	s := h.create(alice, domain.ScopePrivate, headerInput("live"))
	h.waitStatus(s.ID, domain.MCPConnected)
	first := e.Open()[0]

	release := e.Hold() // keeps the redial in flight, so the lost state stays to be seen
	e.Kill(errors.New("connection reset by peer"))
	got := h.until(s.ID, "lost", func(s mcp.Server) bool { return s.Status != domain.MCPConnected })
	if got.Status != domain.MCPDisconnected && got.Status != domain.MCPConnecting {
		t.Errorf("after the kill: status %s, want disconnected (or connecting again)", got.Status)
	}
	if !strings.Contains(got.LastError, "connection reset by peer") {
		t.Errorf("after the kill: last_error %q, want the session's error", got.LastError)
	}
	if len(got.Tools) != 0 {
		t.Errorf("a lost connection still offers %d tools", len(got.Tools))
	}
	eventually(t, "the server is redialled", func() bool { return len(e.Targets()) == 2 })
	release()
	h.until(s.ID, "reconnected", func(s mcp.Server) bool { return s.Status == domain.MCPConnected && s.LastError == "" })
	if open := e.Open(); len(open) != 1 || open[0] == first {
		t.Errorf("open sessions after the redial: %d, want one new one", len(open))
	}
}

func TestStatusDisabledAndNeedsAuth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("off", "ping")
	in := headerInput("off")
	in.Enabled = ptr(false)
	off := h.create(alice, domain.ScopePrivate, in)
	if off.Status != domain.MCPDisabled || off.Enabled {
		t.Errorf("a disabled create: status %s, enabled %v", off.Status, off.Enabled)
	}
	_, err := h.svc.Connect(t.Context(), alice, off.ID, callbackURL)
	wantCode(t, "connect a disabled server", err, "conflict")

	oe := h.endpoint("signin", "ping")
	oauth := h.create(alice, domain.ScopePrivate, oauthInput("signin"))
	got := h.waitStatus(oauth.ID, domain.MCPNeedsAuth)
	if got.HasOAuthToken || got.LastError == "" {
		t.Errorf("needs_auth: has_oauth_token %v, last_error %q", got.HasOAuthToken, got.LastError)
	}
	eventually(t, "the oauth server is dialed", func() bool { return len(oe.Targets()) > 0 })
	if o := oe.Targets()[0].OAuth; o == nil || o.Authorize != nil || o.Grant != nil || o.SaveGrant == nil {
		t.Errorf("a background dial's OAuth = %+v, want no grant and no interactive sign-in", o)
	}

	// Enabling connects; disabling disconnects for good.
	in.Enabled = ptr(true)
	if _, err := h.svc.Update(t.Context(), alice, off.ID, in); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(off.ID, domain.MCPConnected)
	session := e.Open()[0]
	in.Enabled = ptr(false)
	if _, err := h.svc.Update(t.Context(), alice, off.ID, in); err != nil {
		t.Fatal(err)
	}
	eventually(t, "disabling closes the session", session.Closed)
	if got := h.get(off.ID); got.Status != domain.MCPDisabled || len(got.Tools) != 0 {
		t.Errorf("after disabling: status %s, tools %d", got.Status, len(got.Tools))
	}
}

func TestDeleteEndsTheConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("gone", "ping")
	s := h.create(alice, domain.ScopePrivate, headerInput("gone"))
	h.waitStatus(s.ID, domain.MCPConnected)
	session := e.Open()[0]
	if err := h.svc.Delete(t.Context(), alice, s.ID); err != nil {
		t.Fatal(err)
	}
	if !session.Closed() {
		t.Error("delete left the session open")
	}
}

func TestStartConnectsEnabledAndCloseEndsSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	at := h.clock.Now()
	row := func(id, name string, enabled bool) domain.MCPServer {
		return domain.MCPServer{ID: id, Name: name, Enabled: enabled, CreatedAt: at, UpdatedAt: at,
			Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID},
			Config:    domain.MCPConfig{Endpoint: endpointURL(name), AuthMode: domain.MCPAuthHeader}}
	}
	on, off, held := h.endpoint("on", "a"), h.endpoint("off", "b"), h.endpoint("held", "c")
	for _, r := range []domain.MCPServer{row("s1", "on", true), row("s2", "off", false), row("s3", "held", true)} {
		if err := h.store.InsertMCPServer(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.get("s1"); got.Status != domain.MCPDisconnected || len(on.Targets()) != 0 {
		t.Errorf("before Start: status %s, %d dials; want disconnected, none", got.Status, len(on.Targets()))
	}
	release := held.Hold()
	defer release()
	if err := h.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("s1", domain.MCPConnected)
	eventually(t, "the held server is dialed", func() bool { return len(held.Targets()) == 1 })
	if got := h.get("s2"); got.Status != domain.MCPDisabled || len(off.Targets()) != 0 {
		t.Errorf("a disabled row after Start: status %s, %d dials", got.Status, len(off.Targets()))
	}

	session := on.Open()[0]
	closed := make(chan struct{})
	go func() { h.svc.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(waitFor):
		t.Fatal("Close did not return while a dial was held")
	}
	if !session.Closed() {
		t.Error("Close left a session open")
	}
	if h.get("s1").Status == domain.MCPConnected {
		t.Error("a closed service still reports connected")
	}
	if _, err := h.svc.Connect(context.Background(), alice, "s1", callbackURL); err == nil && len(on.Targets()) > 1 {
		t.Error("a closed service dialed again")
	}
}

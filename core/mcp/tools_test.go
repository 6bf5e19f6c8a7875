package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/ports"
)

// resolveOne resolves one tool name for alice's private agent or fails.
func (h *harness) resolveOne(name string) mcp.Tool {
	h.t.Helper()
	got, unavailable, err := h.svc.Resolve(h.t.Context(), domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}, alice.User.ID, []string{name})
	if err != nil || len(got) != 1 || len(unavailable) != 0 {
		h.t.Fatalf("resolve %s = %+v, %+v, %v", name, got, unavailable, err)
	}
	return got[0]
}

func TestCallPassesTheResultThrough(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("calc", "add")
	want := ports.MCPResult{Content: []ports.MCPContent{{Type: "text", Text: "no"}}, Structured: json.RawMessage(`{"sum":3}`), IsError: true}
	e.Handle("add", func(_ context.Context, args json.RawMessage) (ports.MCPResult, error) {
		if string(args) != `{"a":1,"b":2}` {
			return ports.MCPResult{}, &ports.MCPError{Kind: ports.MCPProtocol, Message: "bad args " + string(args)}
		}
		return want, nil
	})
	s := h.create(alice, domain.ScopePrivate, headerInput("calc"))
	h.waitStatus(s.ID, domain.MCPConnected)
	tool := h.resolveOne("calc__add")
	if tool.ServerID != s.ID || tool.Tool != "add" || tool.Server != "calc" {
		t.Fatalf("resolved %+v", tool)
	}
	got, err := h.svc.Call(t.Context(), tool, json.RawMessage(`{"a":1,"b":2}`))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("call = %+v, %v; want %+v (an isError result is a result)", got, err, want)
	}
	if calls := e.Open()[0].Calls(); len(calls) != 1 || calls[0].Tool != "add" {
		t.Errorf("the server saw calls %+v, want one of add by its own name", calls)
	}
	if h.get(s.ID).Status != domain.MCPConnected {
		t.Error("a tool's own failure changed the connection")
	}
}

func TestCallTransportErrorMarksTheConnectionLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("net", "fetch")
	e.Handle("fetch", func(context.Context, json.RawMessage) (ports.MCPResult, error) {
		return ports.MCPResult{}, unreachable("read tcp: connection reset")
	})
	s := h.create(alice, domain.ScopePrivate, headerInput("net"))
	h.waitStatus(s.ID, domain.MCPConnected)
	tool := h.resolveOne("net__fetch")
	release := e.Hold() // the redial waits, so the lost state stays to be seen
	defer release()
	_, err := h.svc.Call(t.Context(), tool, nil)
	wantCode(t, "call over a broken transport", err, errs.Upstream)
	if !strings.Contains(errs.MessageOf(err), "connection reset") {
		t.Errorf("message %q, want the transport's error", errs.MessageOf(err))
	}
	got := h.get(s.ID)
	if got.Status == domain.MCPConnected || !strings.Contains(got.LastError, "connection reset") {
		t.Errorf("after the failed call: status %s, last_error %q; want it lost with the error", got.Status, got.LastError)
	}
	eventually(t, "the server is redialled", func() bool { return len(e.Targets()) == 2 })
	release()
	h.waitStatus(s.ID, domain.MCPConnected)
}

func TestCallThatNeedsAuthTellsToConnectAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("docs", "search")
	s := h.withGrant("docs")
	if got := h.waitStatus(s.ID, domain.MCPConnected); !got.HasOAuthToken {
		t.Error("connected with a grant but has_oauth_token is false")
	}
	if o := e.Targets()[0].OAuth; o == nil || o.Grant == nil || o.Grant.AccessToken != "at" || o.Grant.RefreshToken != "rt" {
		t.Errorf("dialed with OAuth %+v, want the stored grant opened", o)
	}
	tool := h.resolveOne("docs__search")

	// The refresh token is rejected: calls fail, and so would any redial.
	e.RejectTokens(true)
	e.Handle("search", func(context.Context, json.RawMessage) (ports.MCPResult, error) {
		return ports.MCPResult{}, &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the refresh token was rejected"}
	})
	_, err := h.svc.Call(t.Context(), tool, nil)
	wantCode(t, "call needing a sign-in", err, errs.Upstream)
	if msg := errs.MessageOf(err); !strings.Contains(msg, "signed in again") || !strings.Contains(msg, "Connect") {
		t.Errorf("message %q, want it to tell the person to connect again", msg)
	}
	h.waitStatus(s.ID, domain.MCPNeedsAuth)

	// Connect now signs in, though a grant is stored.
	res, err := h.svc.Connect(t.Context(), alice, s.ID, callbackURL)
	if err != nil || res.AuthorizeURL == "" || res.Status != domain.MCPAuthorizing {
		t.Errorf("connect after needs_auth = %+v, %v; want an authorize URL", res, err)
	}
}

func TestCallOnADisconnectedServerFailsFast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("down", "ping")
	e.FailDials(unreachable("dial tcp: no route to host"))
	s := h.create(alice, domain.ScopePrivate, headerInput("down"))
	h.waitStatus(s.ID, domain.MCPDisconnected)
	tool := mcp.Tool{Name: "down__ping", Tool: "ping", ServerID: s.ID, Server: "down"}
	_, err := h.svc.Call(t.Context(), tool, nil)
	wantCode(t, "call on a disconnected server", err, errs.Upstream)
	msg := errs.MessageOf(err)
	if !strings.Contains(msg, "down is disconnected") && !strings.Contains(msg, "down is connecting") {
		t.Errorf("message %q, want the status", msg)
	}
	if !strings.Contains(msg, "no route to host") {
		t.Errorf("message %q, want the last error", msg)
	}
	if err := h.svc.Delete(t.Context(), alice, s.ID); err != nil {
		t.Fatal(err)
	}
	_, err = h.svc.Call(t.Context(), tool, nil)
	if msg := errs.MessageOf(err); !strings.Contains(msg, "deleted") {
		t.Errorf("call on a deleted server: %q, want it to say so", msg)
	}
}

func TestResolveAndCheckSelectable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.endpoint("mine", "t1", "t2")
	h.endpoint("shared", "g1")
	h.endpoint("down").FailDials(unreachable("connection refused"))
	mine := h.create(alice, domain.ScopePrivate, headerInput("mine"))
	shared := h.create(admin, domain.ScopeGlobal, headerInput("shared"))
	down := h.create(alice, domain.ScopePrivate, headerInput("down"))
	h.waitStatus(mine.ID, domain.MCPConnected)
	h.waitStatus(shared.ID, domain.MCPConnected)
	h.waitStatus(down.ID, domain.MCPDisconnected)

	private := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}
	global := domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: alice.User.ID}
	bobs := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: bob.User.ID}
	type gap struct{ server, tools, reason string }
	for _, tc := range []struct {
		name    string
		holder  domain.Ownership
		names   []string
		tools   []string // resolved names
		missing []gap
	}{
		{"own and shared servers", private, []string{"read_file", "MINE__t1", "shared__g1", "mine__t2"}, []string{"mine__t2", "shared__g1"},
			[]gap{{"mine", "MINE__t1", "no longer offers"}}}, // the server is found case aside, its tools by exact name
		{"own tools", private, []string{"mine__t1", "mine__t2"}, []string{"mine__t1", "mine__t2"}, nil},
		{"global agent, private server", global, []string{"mine__t1", "shared__g1"}, []string{"shared__g1"},
			[]gap{{"mine", "mine__t1", "no such MCP server"}}},
		{"another member's server", bobs, []string{"mine__t1"}, nil, []gap{{"mine", "mine__t1", "no such MCP server"}}},
		{"missing server", private, []string{"nope__x"}, nil, []gap{{"nope", "nope__x", "no such MCP server"}}},
		{"missing tool", private, []string{"mine__t3", "mine__t1"}, []string{"mine__t1"}, []gap{{"mine", "mine__t3", "no longer offers"}}},
		{"disconnected server", private, []string{"down__x", "down__y"}, nil,
			[]gap{{"down", "down__x,down__y", "the server is disconnected: connection refused"}}},
		{"no MCP names", private, []string{"read_file", "shell"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, unavailable, err := h.svc.Resolve(t.Context(), tc.holder, tc.holder.OwnerID, tc.names)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
				if tl.ServerID == "" {
					t.Errorf("resolved %s without its server id", tl.Name)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.tools) {
				t.Errorf("tools = %v, want %v", names, tc.tools)
			}
			if len(unavailable) != len(tc.missing) {
				t.Fatalf("unavailable = %+v, want %+v", unavailable, tc.missing)
			}
			for i, u := range unavailable {
				w := tc.missing[i]
				if u.Server != w.server || strings.Join(u.Tools, ",") != w.tools || !strings.Contains(u.Reason, w.reason) {
					t.Errorf("unavailable[%d] = %+v, want %+v", i, u, w)
				}
			}
		})
	}

	for _, tc := range []struct {
		name   string
		holder domain.Ownership
		tool   string
		ok     bool
		says   string
	}{
		{"own connected tool", private, "mine__t1", true, ""},
		{"shared tool for a global agent", global, "shared__g1", true, ""},
		{"tool the connected server lacks", private, "mine__t9", false, "offers no tool"},
		{"global agent, private server", global, "mine__t1", false, "global agent"},
		{"another member's server", bobs, "mine__t1", false, "no MCP server is named"},
		{"missing server", private, "nope__t1", false, "no MCP server is named"},
		{"disconnected server, any tool", private, "down__whatever", true, ""},
		{"not an MCP name", private, "nothing", false, "not a built-in tool"},
	} {
		err := h.svc.CheckSelectable(t.Context(), tc.holder, tc.tool)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: CheckSelectable = %v, want accepted", tc.name, err)
		case !tc.ok && (!errs.Is(err, errs.Validation) || !strings.Contains(errs.MessageOf(err), tc.says)):
			t.Errorf("%s: CheckSelectable = %v, want validation saying %q", tc.name, err, tc.says)
		}
	}
}

func TestToolChars(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.endpoint("sized", "t1")
	broken := h.endpoint("broken", "b1")
	sized := h.create(alice, domain.ScopePrivate, headerInput("sized"))
	brk := h.create(alice, domain.ScopePrivate, headerInput("broken"))
	h.waitStatus(sized.ID, domain.MCPConnected)
	h.waitStatus(brk.ID, domain.MCPConnected)
	broken.FailListTools(unreachable("timeout"))
	private := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: alice.User.ID}
	got, err := h.svc.ToolChars(t.Context(), private, private.OwnerID, []string{"sized__t1", "broken__b1", "nope__x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"sized": len("sized__t1") + len("does t1") + len(`{"type":"object"}`), "broken": -1, "nope": -1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ToolChars = %v, want %v", got, want)
	}
}

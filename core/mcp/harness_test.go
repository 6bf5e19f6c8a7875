package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// The people of every test: an admin and two members.
var (
	admin = domain.Principal{User: domain.User{ID: "u-admin", Role: domain.RoleAdmin}}
	alice = domain.Principal{User: domain.User{ID: "u-alice", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "u-bob", Role: domain.RoleMember}}
)

// callbackURL is where the OAuth tests' browser returns.
const callbackURL = "https://app.example/api/v1/mcp-servers/oauth/callback"

// waitFor bounds every wait for something the background does: long
// enough for a redial (RetryFirst is 1 s, jittered, doubling) under -race,
// far below the 5-minute sign-in TTL the OAuth tests must not reach.
const waitFor = 10 * time.Second

// harness is a Service over the in-memory store, config store and dialer,
// with a keyed Box so sealing is visible.
type harness struct {
	t      *testing.T
	store  *porttest.MCPStore
	config *porttest.ConfigStore
	dialer *porttest.MCPDialer
	box    *secrets.Box
	clock  *porttest.Clock
	ids    *porttest.IDs
	svc    *mcp.Service
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	box, err := secrets.NewBox([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: &porttest.MCPStore{}, config: &porttest.ConfigStore{}, dialer: &porttest.MCPDialer{},
		box: box, clock: porttest.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)), ids: &porttest.IDs{}}
	h.svc = h.newService()
	return h
}

// newService returns another Service over the harness's ports, closed when
// the test ends.
func (h *harness) newService() *mcp.Service {
	svc := mcp.New(mcp.Deps{Store: h.store, Config: h.config, Box: h.box, Dialer: h.dialer, IDs: h.ids, Clock: h.clock})
	h.t.Cleanup(svc.Close)
	return svc
}

func endpointURL(name string) string { return "https://" + strings.ToLower(name) + ".mcp.example/mcp" }

// headerInput is a header-auth server named name at its own endpoint.
func headerInput(name string) mcp.Input {
	return mcp.Input{Name: name, Config: domain.MCPConfig{Endpoint: endpointURL(name)}}
}

// oauthInput is an OAuth server (dynamic registration) named name.
func oauthInput(name string) mcp.Input {
	in := headerInput(name)
	in.Config.AuthMode = domain.MCPAuthOAuth
	return in
}

func ptr[T any](v T) *T { return &v }

// tools lists MCP tools by name.
func tools(names ...string) []ports.MCPTool {
	out := make([]ports.MCPTool, len(names))
	for i, n := range names {
		out[i] = ports.MCPTool{Name: n, Description: "does " + n, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return out
}

// endpoint scripts the endpoint of a server named name with tools.
func (h *harness) endpoint(name string, toolNames ...string) *porttest.MCPEndpoint {
	e := h.dialer.Endpoint(endpointURL(name))
	e.SetTools(tools(toolNames...)...)
	return e
}

// create creates a server or fails the test.
func (h *harness) create(p domain.Principal, scope domain.Scope, in mcp.Input) mcp.Server {
	h.t.Helper()
	s, err := h.svc.Create(h.t.Context(), p, scope, in)
	if err != nil {
		h.t.Fatalf("create %s: %v", in.Name, err)
	}
	return s
}

// get reads a server as an admin (who sees every row).
func (h *harness) get(id string) mcp.Server {
	h.t.Helper()
	s, err := h.svc.Get(context.Background(), admin, id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return s
}

// row reads a server as stored.
func (h *harness) row(id string) domain.MCPServer {
	h.t.Helper()
	r, err := h.store.FindMCPServer(context.Background(), id)
	if err != nil {
		h.t.Fatalf("find %s: %v", id, err)
	}
	return r
}

// rows lists the store's rows: what a refused write must leave alone.
func (h *harness) rows() []domain.MCPServer {
	h.t.Helper()
	r, err := h.store.ListMCPServers(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// until polls the server until ok accepts it, and fails the test with the
// last view when waitFor passes first.
func (h *harness) until(id, what string, ok func(mcp.Server) bool) mcp.Server {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := h.get(id)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("server %s never became %s: status %s, last_error %q", s.Name, what, s.Status, s.LastError)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitStatus waits until the server's status is want.
func (h *harness) waitStatus(id string, want domain.MCPStatus) mcp.Server {
	h.t.Helper()
	return h.until(id, string(want), func(s mcp.Server) bool { return s.Status == want })
}

// eventually polls cond until it holds, failing the test after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// addAgent stores an agent selecting tools, held as own.
func (h *harness) addAgent(id, name string, own domain.Ownership, toolNames ...string) {
	h.t.Helper()
	a := domain.Agent{ID: id, Ownership: own, AgentSpec: domain.AgentSpec{Name: name, Model: "m", Tools: toolNames}}
	err := h.config.InConfigTx(h.t.Context(), func(tx ports.ConfigTx) error { return tx.InsertAgent(h.t.Context(), a) })
	if err != nil {
		h.t.Fatal(err)
	}
}

// withGrant makes an OAuth server of alice's whose stored grant works: made
// disabled, so no dial races the seeded grant, then enabled to connect.
func (h *harness) withGrant(name string) mcp.Server {
	h.t.Helper()
	in := oauthInput(name)
	in.Enabled = ptr(false)
	s := h.create(alice, domain.ScopePrivate, in)
	h.seedGrant(s.ID, domain.MCPGrant{AccessToken: "at", RefreshToken: "rt", TokenURL: "https://as.example/token", ClientID: "c"})
	in.Enabled = ptr(true)
	if _, err := h.svc.Update(h.t.Context(), alice, s.ID, in); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// seedGrant stores g as the server's grant, sealed as the service seals it.
func (h *harness) seedGrant(id string, g domain.MCPGrant) {
	h.t.Helper()
	raw, _ := json.Marshal(g)
	sealed, err := h.box.Seal(grantPlace(id), string(raw))
	if err != nil {
		h.t.Fatal(err)
	}
	if ok, err := h.store.SaveMCPGrant(h.t.Context(), id, h.row(id).SealedGrant, sealed); !ok || err != nil {
		h.t.Fatalf("seed grant: %v %v", ok, err)
	}
}

// grantPlace is where the service seals a server's grant (validate.go).
func grantPlace(id string) string { return secrets.Place("mcp_servers", "oauth_grant", id) }

// unreachable is a transport failure as the adapter classifies it.
func unreachable(msg string) error { return &ports.MCPError{Kind: ports.MCPUnreachable, Message: msg} }

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code errs.Code) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Errorf("%s = %v (%s), want %s", what, err, errs.CodeOf(err), code)
	}
}

package porttest_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The MCP server fake keeps the MCP server contract the SQL store keeps.
func TestMCPStoreKeepsTheMCPServerContract(t *testing.T) {
	t.Parallel()
	storetest.MCPServers(t, &porttest.MCPStore{}, func(_ *testing.T, name string) string { return name })
}

func TestMCPDialerSignsInThroughAuthorize(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var d porttest.MCPDialer
	e := d.Endpoint("https://mcp.example/x")
	e.SetTools(ports.MCPTool{Name: "echo"})

	var saved []domain.MCPGrant
	var issued string
	o := &ports.MCPOAuth{RedirectURL: "https://app.example/cb", Scopes: []string{"read"},
		SaveGrant: func(g domain.MCPGrant) error { saved = append(saved, g); return nil }}
	target := ports.MCPTarget{Endpoint: "https://mcp.example/x", OAuth: o}

	if _, err := d.Dial(ctx, target); kindOf(err) != ports.MCPNeedsAuth {
		t.Fatalf("dial without grant or Authorize = %v, want needs_auth", err)
	}
	o.Authorize = func(_ context.Context, u string) (ports.MCPAuthorization, error) {
		issued = u
		q, _ := url.Parse(u)
		return ports.MCPAuthorization{Code: "c1", State: q.Query().Get("state")}, nil
	}
	sess, err := d.Dial(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(issued)
	if u.Query().Get("state") == "" || u.Query().Get("redirect_uri") != "https://app.example/cb" {
		t.Errorf("authorize URL %q lacks state or redirect_uri", issued)
	}
	if len(saved) != 1 || saved[0].AccessToken != "access-c1" {
		t.Errorf("saved grants = %+v, want one for code c1", saved)
	}
	res, err := sess.CallTool(ctx, "echo", []byte(`{"a":1}`))
	if err != nil || res.Content[0].Text != `{"a":1}` {
		t.Errorf("call = %+v, %v", res, err)
	}
	e.Kill(errors.New("reset"))
	<-sess.Done()
	if sess.Err() == nil || kindOf(func() error { _, err := sess.CallTool(ctx, "echo", nil); return err }()) != ports.MCPUnreachable {
		t.Errorf("a killed session: err %v, calls should fail unreachable", sess.Err())
	}

	o.Authorize = func(context.Context, string) (ports.MCPAuthorization, error) {
		return ports.MCPAuthorization{Code: "c2", State: "forged"}, nil
	}
	if _, err := d.Dial(ctx, target); kindOf(err) != ports.MCPAuthFailed {
		t.Errorf("dial with a forged state = %v, want auth_failed", err)
	}
	if _, err := d.Dial(ctx, ports.MCPTarget{Endpoint: "https://elsewhere.example"}); kindOf(err) != ports.MCPUnreachable {
		t.Errorf("dial of an unscripted endpoint = %v, want unreachable", err)
	}
}

func kindOf(err error) ports.MCPErrorKind {
	var me *ports.MCPError
	if errors.As(err, &me) {
		return me.Kind
	}
	return ""
}

func TestMCPStoreKeepsTheSignInContract(t *testing.T) {
	storetest.MCPSignIns(t, &porttest.MCPStore{}, "ann")
}

func TestMCPStoreKeepsThePersonalGrantContract(t *testing.T) {
	storetest.MCPPersonalGrants(t, &porttest.MCPStore{}, "ann", "bob")
}

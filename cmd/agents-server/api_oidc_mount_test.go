package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/workbench"
)

// Under a host program's mount prefix, single sign-on works as at the
// root: the redirect URI, the binding cookie's path and the landing all
// carry the prefix.
func TestOIDCWorksUnderTheMountPrefix(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	issuer := startOP(t, []string{base + "/agents/api/v1/auth/oidc/callback"}, []opUser{ann})
	ctx := context.Background()
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: t.TempDir(), PasswordParams: fastPasswords, BaseURL: base,
		OIDC: &workbench.OIDCOptions{Issuer: issuer, ClientID: opClientID, ClientSecret: opClientSecret, Name: "Test IdP"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wb.Close() })
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: wb.Handler(workbench.MountOptions{Prefix: "/agents"})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	b := newSSOBrowser(t)
	page, id := b.toProvider(base + "/agents")
	at := b.login(page, id, "ann", "ann-password")
	token, refusal := landing(t, at)
	if token == "" || !strings.HasPrefix(at.String(), base+"/agents/#token=") {
		t.Fatalf("landed at %s (refusal %q), not in the mounted workbench", at, refusal)
	}
	req, _ := http.NewRequest("GET", base+"/agents/api/v1/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the token under the prefix: %v %v", resp, err)
	}
	resp.Body.Close()
}

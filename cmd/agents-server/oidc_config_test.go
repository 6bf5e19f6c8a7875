package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Single sign-on's flags: it needs --base-url and a client id, the secret
// comes from a file (or the environment), never a flag, and
// --password-login=false turns passwords off.
func TestOIDCConfigFlags(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // the error's words; "" for none
	}{
		{[]string{"--oidc-issuer", "https://idp.example", "--oidc-client-id", "web"}, "needs --base-url"},
		{[]string{"--oidc-issuer", "https://idp.example", "--base-url", "https://agents.example"}, "needs --oidc-client-id"},
		{[]string{"--oidc-issuer", "idp.example", "--oidc-client-id", "web", "--base-url", "https://agents.example"}, "absolute http(s) URL"},
		{[]string{"--oidc-client-id", "web"}, "need --oidc-issuer"},
		{[]string{"--oidc-client-secret", "s3cret"}, "flag provided but not defined"},
		{[]string{"--oidc-issuer", "https://idp.example", "--oidc-client-id", "web", "--base-url", "https://agents.example",
			"--oidc-client-secret-file", secret, "--oidc-allowed-domains", "example.com", "--password-login=false"}, ""},
	} {
		cfg, err := parseConfig(tc.args, io.Discard)
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			o := cfg.SSO.options()
			if o == nil || o.ClientSecret != "s3cret" || o.AllowedDomains[0] != "example.com" || !cfg.SSO.PasswordLoginOff {
				t.Fatalf("%v read as %+v", tc.args, cfg.SSO)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil || cfg.SSO.PasswordLoginOff || cfg.SSO.options() != nil {
		t.Fatalf("the defaults: %+v, %v", cfg.SSO, err)
	}
}

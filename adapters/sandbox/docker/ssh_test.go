package docker

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/errs"
)

// No OpenSSH server can run here, so the SSH path is covered by these unit
// tests of parsing and configuration plus sshd_test.go, which serves the
// streamlocal channel from an in-process golang.org/x/crypto/ssh server.

func TestParseSSHHost(t *testing.T) {
	for _, tc := range []struct {
		raw                string
		user, addr, socket string
		bad                string // the field a validation error names
	}{
		{raw: "ssh://me@host", user: "me", addr: "host:22", socket: "/var/run/docker.sock"},
		{raw: "ssh://me@host:2222/", user: "me", addr: "host:2222", socket: "/var/run/docker.sock"},
		{raw: "ssh://me@10.0.0.5:2222/run/user/1000/docker.sock", user: "me", addr: "10.0.0.5:2222", socket: "/run/user/1000/docker.sock"},
		{raw: "ssh://me@[::1]:22", user: "me", addr: "[::1]:22", socket: "/var/run/docker.sock"},
		{raw: "ssh://host", bad: "host"},
		{raw: "ssh://me:pw@host", bad: "host"},
		{raw: "ssh://me@", bad: "host"},
		{raw: "ssh://me@host?x=1", bad: "host"},
	} {
		got, err := parseSSHHost(tc.raw)
		if tc.bad != "" {
			if _, named := errs.FieldsOf(err)[tc.bad]; !named {
				t.Errorf("%s: %v, want a validation error on %s", tc.raw, err, tc.bad)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("%s: the error repeats the password: %v", tc.raw, err)
			}
			continue
		}
		if err != nil || got.user != tc.user || got.addr != tc.addr || got.socket != tc.socket {
			t.Errorf("%s = %+v, %v; want %s %s %s", tc.raw, got, err, tc.user, tc.addr, tc.socket)
		}
	}
}

func testKeyPEM(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

func TestSSHClientConfig(t *testing.T) {
	key := testKeyPEM(t, "")
	encrypted := testKeyPEM(t, "open sesame")

	for _, tc := range []struct {
		name, password, key string
		methods             int    // auth methods offered
		bad                 string // the field a validation error names
	}{
		{name: "key", key: key, methods: 1},
		{name: "password", password: "pw", methods: 2}, // password + keyboard-interactive
		{name: "both", password: "pw", key: key, methods: 3},
		{name: "encrypted key opened with the password", password: "open sesame", key: encrypted, methods: 3},
		{name: "encrypted key, wrong passphrase", password: "nope", key: encrypted, bad: "ssh_key"},
		{name: "encrypted key, no passphrase", key: encrypted, bad: "ssh_key"},
		{name: "garbage key", key: "-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n", bad: "ssh_key"},
		{name: "nothing", bad: "ssh_password"},
	} {
		cfg, err := sshClientConfig("me", tc.password, tc.key)
		if tc.bad != "" {
			if _, named := errs.FieldsOf(err)[tc.bad]; !named {
				t.Errorf("%s: %v, want a validation error on %s", tc.name, err, tc.bad)
			}
			if err != nil && (tc.password != "" && strings.Contains(err.Error(), tc.password) || strings.Contains(err.Error(), "bm90IGEga2V5")) {
				t.Errorf("%s: the error leaks a secret: %v", tc.name, err)
			}
			continue
		}
		if err != nil || cfg.User != "me" || len(cfg.Auth) != tc.methods || cfg.Timeout == 0 {
			t.Errorf("%s: %+v, %v; want user me and %d auth methods", tc.name, cfg, err, tc.methods)
		}
	}
}

func TestDaemonForCachesPerHostAndCredentials(t *testing.T) {
	rt := New(Options{})
	defer rt.Close()
	target := dockerTarget{Host: "ssh://me@192.0.2.1", SSHPassword: "one"}
	a, err := rt.daemonFor(target)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := rt.daemonFor(target); b != a {
		t.Error("the same target built a second client")
	}
	target.SSHPassword = "two"
	c, err := rt.daemonFor(target)
	if err != nil || c == a {
		t.Errorf("a rotated password kept the old client (%v)", err)
	}
	if got := c.scrub("auth failed for two"); strings.Contains(got, "two") {
		t.Errorf("scrub left the password: %q", got)
	}
	// Host keys are pinned per sandbox, so is an ssh:// connection; a
	// daemon reached without SSH is shared.
	other := target
	other.SandboxID = "another sandbox"
	if o, err := rt.daemonFor(other); err != nil || o == c {
		t.Errorf("another sandbox at the same ssh host shares its client (%v)", err)
	}
	local, _ := rt.daemonFor(dockerTarget{SandboxID: "a", Host: "tcp://127.0.0.1:2375"})
	if shared, _ := rt.daemonFor(dockerTarget{SandboxID: "b", Host: "tcp://127.0.0.1:2375"}); shared != local {
		t.Error("two sandboxes on one tcp daemon built two clients")
	}
	for host, field := range map[string]string{"ftp://x": "host", "ssh://me@h": "ssh_password", "ssh://h": "host"} {
		if _, err := rt.daemonFor(dockerTarget{Host: host}); errs.FieldsOf(err)[field] == "" {
			t.Errorf("host %s: %v, want a validation error on %s", host, err, field)
		}
	}
	if tcp, err := rt.daemonFor(dockerTarget{Host: "tcp://u:secret@127.0.0.1:2375"}); err != nil || strings.Contains(tcp.display, "secret") {
		t.Errorf("tcp host display = %q, %v", tcp.display, err)
	}
}

package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// hostOnlySSHD is an SSH server that completes the handshake and the
// password login, then refuses every channel: no Docker daemon stands
// behind it, so a sandbox test through it answers 502 — but only after the
// host key was checked, which is what these tests are about. Its host key
// can be swapped while it keeps its address, as a reinstalled machine's.
type hostOnlySSHD struct {
	addr   string
	mu     sync.Mutex
	signer ssh.Signer
}

func startHostOnlySSHD(t *testing.T, user, password string) *hostOnlySSHD {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	s := &hostOnlySSHD{addr: ln.Addr().String()}
	s.newKey(t)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
				if c.User() == user && string(pw) == password {
					return nil, nil
				}
				return nil, errors.New("denied")
			}}
			cfg.AddHostKey(s.key())
			go func() {
				sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
				if err != nil {
					_ = conn.Close()
					return
				}
				defer sc.Close()
				go ssh.DiscardRequests(reqs)
				for nc := range chans {
					_ = nc.Reject(ssh.ConnectionFailed, "no docker daemon here")
				}
			}()
		}
	}()
	return s
}

// newKey makes the server present a fresh host key from now on.
func (s *hostOnlySSHD) newKey(t *testing.T) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.signer = signer
	s.mu.Unlock()
}

func (s *hostOnlySSHD) key() ssh.Signer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signer
}

func (s *hostOnlySSHD) fingerprint() string { return ssh.FingerprintSHA256(s.key().PublicKey()) }

func TestSSHHostKeyIsPinnedAcrossRestartsAndResetByAdmins(t *testing.T) {
	t.Parallel()
	sshd := startHostOnlySSHD(t, "deploy", "pw")
	cfg := testConfig(t)
	h := startServer(t, cfg)
	config := map[string]any{"image": "agents-sandbox:test", "host": "ssh://deploy@" + sshd.addr, "ssh_password": "pw"}
	sb := h.createSandbox(map[string]any{"name": "remote", "type": "docker", "config": config})
	if sb.SSHHostKey != nil {
		t.Fatalf("a new sandbox shows a pinned key: %+v", sb.SSHHostKey)
	}
	get := func(h *harness, token string) httpapi.SandboxView {
		t.Helper()
		var v httpapi.SandboxView
		h.call("GET", "/api/v1/sandboxes/"+sb.ID, token, nil).want(t, 200).decode(t, &v)
		return v
	}

	// The first connection pins the key it meets; everyone reads it, and
	// the revision did not move (a pin is not an edit).
	first := sshd.fingerprint()
	h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream")
	got := get(h, h.member("kim"))
	if k := got.SSHHostKey; k == nil || k.Fingerprint != first || k.Type != "ssh-ed25519" ||
		!strings.HasPrefix(k.PublicKey, "ssh-ed25519 AAAA") || k.PinnedAt.IsZero() || got.Revision != 1 {
		t.Fatalf("after the first connection: %+v at revision %d, want %s pinned", got.SSHHostKey, got.Revision, first)
	}

	// A restart, and the host presents another key: refused, 502, naming
	// both fingerprints and how to reset.
	h.stop()
	sshd.newKey(t)
	second := sshd.fingerprint()
	h = startServer(t, cfg)
	d := h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream")
	if !strings.Contains(d.Message, first) || !strings.Contains(d.Message, second) || !strings.Contains(d.Message, "Reset host key") ||
		!strings.Contains(d.Message, "/api/v1/sandboxes/"+sb.ID+"/ssh-host-key") {
		t.Fatalf("the refusal does not name both fingerprints and the reset: %s", d.Message)
	}
	if k := get(h, h.admin).SSHHostKey; k == nil || k.Fingerprint != first {
		t.Fatalf("the refusal moved the pin: %+v", k)
	}

	// Only an admin resets it; then the next connection pins the new key.
	h.call("DELETE", "/api/v1/sandboxes/"+sb.ID+"/ssh-host-key", h.member("lee"), nil).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/sandboxes/nope/ssh-host-key", h.admin, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/sandboxes/"+sb.ID+"/ssh-host-key", h.admin, nil).want(t, 204)
	if v := get(h, h.admin); v.SSHHostKey != nil || v.Revision != 1 {
		t.Fatalf("after a reset: %+v", v)
	}
	d = h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream")
	if strings.Contains(d.Message, "host key") {
		t.Fatalf("refused after a reset: %s", d.Message)
	}
	if k := get(h, h.admin).SSHHostKey; k == nil || k.Fingerprint != second {
		t.Fatalf("after a reset and a connection: %+v, want %s", k, second)
	}

	// Another host is another machine: the pin goes with the old one.
	config["host"] = "ssh://deploy@127.0.0.1:1"
	var moved httpapi.SandboxView
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "remote", "type": "docker", "config": config}).
		want(t, 200).decode(t, &moved)
	if moved.SSHHostKey != nil || get(h, h.admin).SSHHostKey != nil {
		t.Fatalf("a new host kept the old host's pin: %+v", moved.SSHHostKey)
	}
}

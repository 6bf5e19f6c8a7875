package main

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/internal/sshdtest"
)

func TestSSHHostKeyIsPinnedAcrossRestartsAndResetByAdmins(t *testing.T) {
	t.Parallel()
	// No daemon stands behind it: a sandbox test through it answers 502, but
	// only after the host key was checked, which is what this is about.
	sshd := sshdtest.Start(t, "deploy", "pw", "")
	cfg := testConfig(t)
	h := startServer(t, cfg)
	config := map[string]any{"image": "agents-sandbox:test", "host": "ssh://deploy@" + sshd.Addr, "ssh_password": "pw"}
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
	first := sshd.Fingerprint()
	h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream")
	got := get(h, h.member("kim"))
	if k := got.SSHHostKey; k == nil || k.Fingerprint != first || k.Type != "ssh-ed25519" ||
		!strings.HasPrefix(k.PublicKey, "ssh-ed25519 AAAA") || k.PinnedAt.IsZero() || got.Revision != 1 {
		t.Fatalf("after the first connection: %+v at revision %d, want %s pinned", got.SSHHostKey, got.Revision, first)
	}

	// A restart, and the host presents another key: refused, 502, naming
	// both fingerprints and how to reset.
	h.stop()
	sshd.SetHostKey(sshdtest.NewHostKey(t))
	second := sshd.Fingerprint()
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

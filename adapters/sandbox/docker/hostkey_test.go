package docker

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/sshdtest"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// pinStore stands in for the server's store (the fake that keeps the SQL
// store's project contract, pins included): it outlives the Runtimes made
// over it, as the database outlives a process.
type pinStore struct{ *porttest.ProjectStore }

// newPinStore stores a docker sandbox per id, on its host.
func newPinStore(t *testing.T, hosts map[string]string) pinStore {
	t.Helper()
	p := pinStore{&porttest.ProjectStore{}}
	ctx := context.Background()
	err := p.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		for id, host := range hosts {
			sb := domain.Sandbox{ID: id, Name: id, Type: domain.SandboxDocker, Revision: 1, Docker: &domain.DockerConfig{Host: host}}
			if err := tx.InsertSandbox(ctx, sb); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p pinStore) pinned(t *testing.T, sandboxID string) domain.SSHHostKey {
	t.Helper()
	sb, err := p.FindSandbox(context.Background(), sandboxID)
	if err != nil {
		t.Fatal(err)
	}
	return sb.SSHHostKey
}

func (p pinStore) reset(t *testing.T, sandboxID string) {
	t.Helper()
	ctx := context.Background()
	if err := p.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, sandboxID) }); err != nil {
		t.Fatal(err)
	}
}

// startFakeDockerAPI serves the two calls Containers makes (the version
// ping and the list) on a unix socket, so the SSH path is tested whole
// without a Docker daemon.
func startFakeDockerAPI(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			_, _ = w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/containers/json"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
		default:
			http.Error(w, `{"message":"not in this fake"}`, http.StatusNotFound)
		}
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

func TestSSHHostKeyPinOutlivesTheRuntimeAndResets(t *testing.T) {
	t.Parallel()
	sshd := sshdtest.Start(t, "tester", "s3cret-pw", startFakeDockerAPI(t))
	firstKey := sshd.HostKey()
	host := "ssh://tester@" + sshd.Addr
	target := ports.SandboxTarget{SandboxID: "sb-1", Type: domain.SandboxDocker, Config: &domain.DockerConfig{Host: host, SSHPassword: "s3cret-pw"}}
	store := newPinStore(t, map[string]string{"sb-1": host, "sb-2": "ssh://tester@elsewhere:22"})
	met := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	runtime := func() *Runtime {
		rt := New(Options{HostKeys: store, Clock: ports.ClockFunc(func() time.Time { return met })})
		t.Cleanup(func() { _ = rt.Close() })
		return rt
	}
	ctx := context.Background()

	// The first connection pins the key it meets, through the store.
	if _, err := runtime().Containers(ctx, target); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	pin := store.pinned(t, "sb-1")
	if pin.Key != authorizedKey(firstKey) || pin.PinnedAt != met || pin.Type() != "ssh-ed25519" ||
		pin.Fingerprint() != ssh.FingerprintSHA256(firstKey) {
		t.Fatalf("pinned %+v (%s), want %s met at %s", pin, pin.Fingerprint(), ssh.FingerprintSHA256(firstKey), met)
	}

	// A restart: a new Runtime, and the host now presents another key. It
	// is refused before a password is offered, naming both fingerprints
	// and the way to reset.
	sshd.SetHostKey(sshdtest.NewHostKey(t))
	secondKey := sshd.HostKey()
	logins := sshd.LoginAttempts()
	restarted := runtime()
	_, err := restarted.Containers(ctx, target)
	msg := errs.MessageOf(err)
	if !errs.Is(err, errs.Upstream) || !strings.Contains(msg, ssh.FingerprintSHA256(firstKey)) ||
		!strings.Contains(msg, ssh.FingerprintSHA256(secondKey)) || !strings.Contains(msg, "/api/v1/sandboxes/sb-1/ssh-host-key") {
		t.Fatalf("a changed host key after a restart: %v; want upstream naming both fingerprints and the reset", err)
	}
	if sshd.LoginAttempts() != logins {
		t.Error("the password was offered to a host whose key was refused")
	}
	if store.pinned(t, "sb-1") != pin {
		t.Fatalf("the refusal moved the pin: %+v", store.pinned(t, "sb-1"))
	}

	// After a reset the next connection pins the key it meets.
	store.reset(t, "sb-1")
	if _, err := restarted.Containers(ctx, target); err != nil {
		t.Fatalf("after a reset: %v", err)
	}
	if got := store.pinned(t, "sb-1"); got.Key != authorizedKey(secondKey) {
		t.Fatalf("after a reset pinned %s, want the key met (%s)", got.Fingerprint(), ssh.FingerprintSHA256(secondKey))
	}

	// A sandbox whose host changed while connecting pins nothing.
	moved := target
	moved.SandboxID = "sb-2"
	if _, err := restarted.Containers(ctx, moved); !errs.Is(err, errs.Conflict) || !store.pinned(t, "sb-2").IsZero() {
		t.Fatalf("a stale target: %v, pin %+v", err, store.pinned(t, "sb-2"))
	}
}

func TestWithoutAStoreHostKeysArePinnedForTheProcess(t *testing.T) {
	t.Parallel()
	sshd := sshdtest.Start(t, "tester", "pw", startFakeDockerAPI(t))
	rt := New(Options{})
	defer rt.Close()
	target := ports.SandboxTarget{SandboxID: "sb", Type: domain.SandboxDocker, Config: &domain.DockerConfig{Host: "ssh://tester@" + sshd.Addr, SSHPassword: "pw"}}
	ctx := context.Background()
	if _, err := rt.Containers(ctx, target); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	// A new connection (the old one dropped) meets another key: refused.
	sshd.SetHostKey(sshdtest.NewHostKey(t))
	_ = rt.Close()
	if _, err := rt.Containers(ctx, target); !errs.Is(err, errs.Upstream) || !strings.Contains(errs.MessageOf(err), "not the one pinned") {
		t.Fatalf("a changed key: %v", err)
	}
}

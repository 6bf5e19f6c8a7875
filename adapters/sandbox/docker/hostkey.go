package docker

import (
	"context"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// An ssh:// daemon is trusted on first use, per sandbox: the first host key
// a sandbox's host presents is pinned through Options.HostKeys (the store,
// so it outlives the process), and every later connection must present
// that same key. The check runs in the SSH handshake, before a credential
// is offered, so a host that fails it never sees the password or key.

// checkHostKey is the handshake's host key check for one sandbox at one
// host: accept the pinned key, pin the presented one when none is, refuse
// any other as an upstream error naming both fingerprints and the way out.
func (r *Runtime) checkHostKey(ctx context.Context, sandboxID, host, display string, key ssh.PublicKey) error {
	presented := domain.SSHHostKey{Key: authorizedKey(key), PinnedAt: r.opts.Clock.Now()}
	pinned, err := r.hostKeys.PinSSHHostKey(ctx, sandboxID, host, presented)
	if err != nil {
		return err
	}
	if pinned.Key == presented.Key {
		return nil
	}
	return errs.E(errs.Upstream, "the SSH host key of %s is not the one pinned for this sandbox: expected %s %s (pinned %s), "+
		"the host presented %s %s. If the host was reinstalled or its key rotated, an admin resets the pin "+
		"(\"Reset host key\" on the sandbox in Settings → Sandboxes, or DELETE /api/v1/sandboxes/%s/ssh-host-key) "+
		"and the next connection pins the key it meets; otherwise something may be intercepting the connection",
		display, pinned.Type(), pinned.Fingerprint(), pinned.PinnedAt.Format("2006-01-02 15:04 MST"),
		presented.Type(), presented.Fingerprint(), sandboxID)
}

// authorizedKey is key in authorized_keys form, without the newline.
func authorizedKey(key ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
}

// memoryHostKeys pins in memory, for the life of the process: the store of
// a Runtime given none (tests, an embedder without a database).
type memoryHostKeys struct {
	mu   sync.Mutex
	keys map[string]domain.SSHHostKey // sandbox id + " " + host → pin
}

// PinSSHHostKey implements ports.SSHHostKeyStore.
func (m *memoryHostKeys) PinSSHHostKey(_ context.Context, sandboxID, host string, presented domain.SSHHostKey) (domain.SSHHostKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := sandboxID + " " + host
	if pinned, ok := m.keys[k]; ok {
		return pinned, nil
	}
	m.keys[k] = presented
	return presented, nil
}

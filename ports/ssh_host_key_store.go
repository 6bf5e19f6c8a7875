package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// SSHHostKeyStore keeps the host keys pinned for docker sandboxes whose
// daemon is reached over ssh:// (trust on first use, kept across
// restarts). It is Docker-only: the docker runtime consults it while an SSH
// connection is being made, so the runtime-neutral calls never carry a pin.
type SSHHostKeyStore interface {
	// PinSSHHostKey returns the key pinned for the sandbox, first pinning
	// presented when none is — one atomic step, so two connections racing
	// to pin cannot both win. host is the docker host the connection was
	// made for: a sandbox whose host is no longer host is conflict (the
	// pin belongs to the address it was met at), a missing one not_found.
	PinSSHHostKey(ctx context.Context, sandboxID, host string, presented domain.SSHHostKey) (domain.SSHHostKey, error)
}

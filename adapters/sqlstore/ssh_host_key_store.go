package sqlstore

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The pinned SSH host keys of docker sandboxes live in two columns of their
// row (migration 00010): written only here, never by UpdateSandbox, so an
// admin's edit and a connection pinning a key cannot overwrite each other.

// PinSSHHostKey implements ports.SSHHostKeyStore: in one write transaction
// it reads the row, refuses when the sandbox moved to another host, and
// stores presented unless a key is pinned already.
func (db *DB) PinSSHHostKey(ctx context.Context, sandboxID, host string, presented domain.SSHHostKey) (domain.SSHHostKey, error) {
	var pinned domain.SSHHostKey
	err := db.tx(ctx, func(tx txQ) error {
		q := projectQ{tx}
		sb, err := q.FindSandbox(ctx, sandboxID)
		if err != nil {
			return err
		}
		// A connection that began before an admin changed the host must not
		// pin the old address's key on the new one.
		if sb.Docker == nil || sb.Docker.Host != host {
			return errs.E(errs.Conflict, "sandbox %q no longer points at this host: its configuration changed while connecting, retry", sb.Name)
		}
		if !sb.SSHHostKey.IsZero() {
			pinned = sb.SSHHostKey
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE sandboxes SET ssh_host_key = ?, ssh_host_key_pinned_at = ? WHERE id = ?`,
			presented.Key, pinnedMS(presented), sandboxID)
		pinned = presented
		return translate(err)
	})
	if err != nil {
		return domain.SSHHostKey{}, err
	}
	// What was stored is what a read will return: milliseconds, UTC.
	if !pinned.IsZero() {
		pinned.PinnedAt = fromMS(ms(pinned.PinnedAt))
	}
	return pinned, nil
}

// ClearSSHHostKey implements ports.ProjectWriter.
func (p projectQ) ClearSSHHostKey(ctx context.Context, sandboxID string) error {
	r, err := p.q.ExecContext(ctx, `UPDATE sandboxes SET ssh_host_key = '', ssh_host_key_pinned_at = 0 WHERE id = ?`, sandboxID)
	return affected(r, err, "sandbox")
}

func pinnedMS(k domain.SSHHostKey) int64 {
	if k.IsZero() {
		return 0
	}
	return ms(k.PinnedAt)
}

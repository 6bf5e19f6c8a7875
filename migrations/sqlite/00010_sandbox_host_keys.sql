-- +goose Up
-- The SSH host key an ssh:// docker daemon presented first (trust on first
-- use), kept with its sandbox so a changed key is refused after a restart
-- too, not only while the process that met it lives. A public key in
-- authorized_keys form ("ssh-ed25519 AAAA…"); '' = nothing pinned, and the
-- next connection pins what it meets. It is not configuration: pinning and
-- resetting leave the row's revision alone.
ALTER TABLE sandboxes ADD COLUMN ssh_host_key TEXT NOT NULL DEFAULT '';
ALTER TABLE sandboxes ADD COLUMN ssh_host_key_pinned_at INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE sandboxes DROP COLUMN ssh_host_key_pinned_at;
ALTER TABLE sandboxes DROP COLUMN ssh_host_key;

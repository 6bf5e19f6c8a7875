package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
)

// SSHHostKey is the host key pinned for a docker sandbox whose daemon is
// reached over ssh://: the first key the host presented (trust on first
// use), kept with the sandbox row so that a changed key is refused after a
// restart as well as before one. It is a public key, not a secret. The zero
// value means nothing is pinned: the next connection pins what it meets.
type SSHHostKey struct {
	// Key is the public key in authorized_keys form: "<type> <base64>".
	Key string
	// PinnedAt is when the key was first met.
	PinnedAt time.Time
}

// IsZero reports whether nothing is pinned.
func (k SSHHostKey) IsZero() bool { return k.Key == "" }

// Type is the key's algorithm, e.g. ssh-ed25519; "" when nothing is pinned.
func (k SSHHostKey) Type() string {
	typ, _, _ := strings.Cut(k.Key, " ")
	return typ
}

// Fingerprint is the key's SHA256 fingerprint as OpenSSH prints it
// (ssh-keygen -lf, the first-connection prompt): "SHA256:" and the unpadded
// base64 of the digest of the wire-form key. "" when nothing is pinned or
// the stored key is malformed.
func (k SSHHostKey) Fingerprint() string {
	_, rest, _ := strings.Cut(k.Key, " ")
	blob, _, _ := strings.Cut(rest, " ")
	wire, err := base64.StdEncoding.DecodeString(blob)
	if err != nil || len(wire) == 0 {
		return ""
	}
	sum := sha256.Sum256(wire)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

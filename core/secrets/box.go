// Package secrets seals credentials at rest and keeps them write-only on the
// wire: the mask rules every secret field follows, AES-256-GCM sealing bound
// to the value's place, and the canary that refuses a wrong or missing key.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/agents-server/agents-server/core/errs"
)

// KeySize is the length of the process key: AES-256.
const KeySize = 32

const (
	sealedPrefix  = "enc:v2:"
	literalPrefix = "enc:text:" // plaintext mode's escape for text that looks sealed
	keyIDBytes    = 4
)

// Box seals and opens secret values. A Box without a key stores plaintext —
// the single-user workbench; a sealed row it meets is an error naming the key
// id the row needs.
type Box struct {
	aead  cipher.AEAD
	keyID string
}

// ParseKey reads a 32-byte key given as base64 (standard or URL alphabet,
// padded or not) or 64 hex digits, the forms `openssl rand` prints.
// Returns validation when the text is none of those or not 32 bytes long.
func ParseKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errs.E(errs.Validation, "the secret key is empty")
	}
	if len(text) == 2*KeySize {
		if k, err := hex.DecodeString(text); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(text); err == nil {
			if len(k) != KeySize {
				return nil, errs.E(errs.Validation, "the secret key decodes to %d bytes; it must be %d (openssl rand -base64 32)", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, errs.E(errs.Validation, "the secret key is neither base64 nor hex (make one with: openssl rand -base64 32)")
}

// NewBox returns a Box sealing under key, or a plaintext Box when key is nil.
// Returns validation for a key of the wrong length.
func NewBox(key []byte) (*Box, error) {
	if key == nil {
		return &Box{}, nil
	}
	if len(key) != KeySize {
		return nil, errs.E(errs.Validation, "the secret key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "secret key cipher")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "secret key cipher")
	}
	sum := sha256.Sum256(key)
	return &Box{aead: aead, keyID: hex.EncodeToString(sum[:keyIDBytes])}, nil
}

// Sealing reports whether the box has a key (values are sealed at rest).
func (b *Box) Sealing() bool { return b.aead != nil }

// KeyID names the box's key by the first bytes of its SHA-256; "" without one.
func (b *Box) KeyID() string { return b.keyID }

// Place names where a sealed value lives — table.column, plus a field for a
// credential inside a JSON column — and is the cipher's additional data, so a
// ciphertext copied anywhere else does not open.
func Place(table, column string, field ...string) string {
	p := table + "." + column
	for _, f := range field {
		p += "+" + f
	}
	return p
}

// Seal returns the stored form of plaintext at place. The empty value stays
// empty (a cleared secret). Text that already looks sealed is sealed (or, with
// no key, escaped) as the text it is — never stored as someone's ciphertext.
func (b *Box) Seal(place, plaintext string) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	if !b.Sealing() {
		if strings.HasPrefix(plaintext, "enc:") {
			return literalPrefix + plaintext, nil
		}
		return plaintext, nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", errs.Wrap(errs.Internal, err, "seal %s", place)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), []byte(place))
	return sealedPrefix + b.keyID + ":" + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open returns the plaintext of a stored value at place. Plaintext rows
// (written before a key was set) open as they are. A sealed row under no key
// or another key, or one moved from another place, is an internal error whose
// detail names the key ids — never ciphertext handed out as a credential.
func (b *Box) Open(place, stored string) (string, error) {
	if rest, ok := strings.CutPrefix(stored, literalPrefix); ok {
		return rest, nil
	}
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil
	}
	keyID, body, ok := strings.Cut(rest, ":")
	if !ok {
		return "", errs.E(errs.Internal, "%s holds a malformed sealed value", place)
	}
	if !b.Sealing() {
		return "", errs.E(errs.Internal, "%s is sealed under key %s but no secret key is set (AGENTS_SECRET_KEY or --secret-key-file)", place, keyID)
	}
	if keyID != b.keyID {
		return "", errs.E(errs.Internal, "%s is sealed under key %s, not the configured key %s", place, keyID, b.keyID)
	}
	raw, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errs.E(errs.Internal, "%s holds a malformed sealed value", place)
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(place))
	if err != nil {
		return "", errs.E(errs.Internal, "%s does not open under key %s: it was sealed for another place or altered", place, keyID)
	}
	return string(plain), nil
}

// SealedKeyID returns the key id a stored value is sealed under, if it is.
func SealedKeyID(stored string) (string, bool) {
	rest, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ":")
	return id, ok
}

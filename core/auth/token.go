package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const (
	tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	tokenRandLen  = 40 // ~238 bits
	hintLen       = 4
)

// mintToken returns a new random token of the given kind.
func mintToken(kind domain.TokenKind) (string, error) {
	buf := make([]byte, tokenRandLen)
	if _, err := rand.Read(buf); err != nil {
		return "", errs.Wrap(errs.Internal, err, "token entropy")
	}
	out := []byte(domain.TokenPrefix(kind))
	for _, b := range buf {
		// 256 % 62 skews a handful of letters by <0.5%; the token keeps ~235
		// bits, far beyond guessing.
		out = append(out, tokenAlphabet[int(b)%len(tokenAlphabet)])
	}
	return string(out), nil
}

// HashToken is how a token is found in the store: tokens are random and long,
// so a plain SHA-256 is enough, and it keeps lookups a single indexed read.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenHint is the token's kind prefix plus its first random characters.
func tokenHint(kind domain.TokenKind, token string) string {
	n := len(domain.TokenPrefix(kind)) + hintLen
	if n > len(token) {
		n = len(token)
	}
	return token[:n] + "…"
}

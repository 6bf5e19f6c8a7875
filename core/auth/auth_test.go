package auth

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func TestPasswordHashing(t *testing.T) {
	h, err := HashPassword("correct horse", DefaultPasswordParams)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash = %s", h)
	}
	if !VerifyPassword("correct horse", h) || VerifyPassword("correct horsE", h) {
		t.Fatal("verify")
	}
	h2, _ := HashPassword("correct horse", DefaultPasswordParams)
	if h2 == h {
		t.Fatal("no salt")
	}
	// A hash made with other parameters still verifies: they travel with it.
	cheap, _ := HashPassword("pw", PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1})
	if !VerifyPassword("pw", cheap) {
		t.Fatal("parameters not read from the hash")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=18$m=64,t=1,p=1$AA$AA"} {
		if VerifyPassword("pw", bad) {
			t.Errorf("malformed hash %q verified", bad)
		}
	}
}

func TestMintedTokens(t *testing.T) {
	seen := map[string]bool{}
	for _, kind := range []domain.TokenKind{domain.TokenSession, domain.TokenPersonal, domain.TokenLaunch} {
		tok, err := mintToken(kind)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok, domain.TokenPrefix(kind)) || len(tok) != len(domain.TokenPrefix(kind))+tokenRandLen || seen[tok] {
			t.Fatalf("%s token %q", kind, tok)
		}
		seen[tok] = true
		if hint := tokenHint(kind, tok); !strings.HasPrefix(tok, strings.TrimSuffix(hint, "…")) || len(hint) >= len(tok) {
			t.Fatalf("hint %q", hint)
		}
	}
	if HashToken("a") == HashToken("b") || len(HashToken("a")) != 64 {
		t.Fatal("HashToken")
	}
}

package secrets

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports/porttest"
)

func key(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

func box(t *testing.T, k []byte) *Box {
	t.Helper()
	b, err := NewBox(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseKeyAcceptsBase64AndHex(t *testing.T) {
	k := key(t)
	for _, text := range []string{
		base64.StdEncoding.EncodeToString(k) + "\n",
		base64.URLEncoding.EncodeToString(k),
		base64.RawStdEncoding.EncodeToString(k),
		hex.EncodeToString(k),
	} {
		got, err := ParseKey(text)
		if err != nil || string(got) != string(k) {
			t.Errorf("%q: %v", text, err)
		}
	}
	for _, bad := range []string{"", "short", base64.StdEncoding.EncodeToString(k[:16]), "!!!!"} {
		if _, err := ParseKey(bad); errs.CodeOf(err) != errs.Validation {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

func TestSealOpenRoundTripBoundToPlace(t *testing.T) {
	b := box(t, key(t))
	place := Place("providers", "api_key")
	sealed, err := b.Seal(place, "sk-live-123")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealed, "enc:v2:"+b.KeyID()+":") || strings.Contains(sealed, "sk-live") {
		t.Fatalf("sealed = %q", sealed)
	}
	if again, _ := b.Seal(place, "sk-live-123"); again == sealed {
		t.Fatal("sealing is deterministic (nonce reuse)")
	}
	if got, err := b.Open(place, sealed); err != nil || got != "sk-live-123" {
		t.Fatalf("open = %q %v", got, err)
	}
	// Moved to another column or field, it does not open.
	for _, elsewhere := range []string{Place("mcp_servers", "headers", "Authorization"), Place("providers", "api_key", "x")} {
		if _, err := b.Open(elsewhere, sealed); errs.CodeOf(err) != errs.Internal {
			t.Errorf("opened at %s: %v", elsewhere, err)
		}
	}
	// Tampering is detected.
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := b.Open(place, tampered); err == nil {
		t.Error("tampered ciphertext opened")
	}
	// Another key, or none, is a loud error naming the ids.
	other := box(t, key(t))
	if _, err := other.Open(place, sealed); err == nil || !strings.Contains(err.Error(), b.KeyID()) {
		t.Errorf("other key: %v", err)
	}
	plain := box(t, nil)
	if _, err := plain.Open(place, sealed); err == nil || !strings.Contains(err.Error(), b.KeyID()) {
		t.Errorf("no key: %v", err)
	}
	// Empty stays empty.
	if s, _ := b.Seal(place, ""); s != "" {
		t.Errorf("empty sealed to %q", s)
	}
}

func TestValuesThatLookSealedStayText(t *testing.T) {
	k := key(t)
	b := box(t, k)
	place := Place("settings", "value", "proxy_url")
	foreign, _ := box(t, key(t)).Seal(place, "someone else's secret")
	for _, bx := range []*Box{b, box(t, nil)} {
		stored, err := bx.Seal(place, foreign)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bx.Open(place, stored)
		if err != nil || got != foreign {
			t.Errorf("sealing=%v: a sealed-looking value read back as %q (%v)", bx.Sealing(), got, err)
		}
	}
	// Plaintext rows written before a key was set still open.
	if got, err := b.Open(place, "http://old:plain@proxy"); err != nil || got != "http://old:plain@proxy" {
		t.Errorf("legacy plaintext: %q %v", got, err)
	}
}

func TestCheckKeyCanary(t *testing.T) {
	ctx := context.Background()
	meta := &porttest.SettingStore{}
	if err := CheckKey(ctx, box(t, nil), meta); err != nil {
		t.Fatalf("plaintext start: %v", err)
	}
	if canary, ok, _ := meta.GetMeta(ctx, CanaryKey); ok {
		t.Fatalf("a plaintext start recorded a canary %q", canary)
	}
	k := key(t)
	b := box(t, k)
	if err := CheckKey(ctx, b, meta); err != nil {
		t.Fatalf("first keyed start: %v", err)
	}
	if canary, _, _ := meta.GetMeta(ctx, CanaryKey); canary == "" {
		t.Fatal("a keyed start recorded no canary")
	}
	if err := CheckKey(ctx, box(t, k), meta); err != nil {
		t.Fatalf("same key refused: %v", err)
	}
	other := box(t, key(t))
	err := CheckKey(ctx, other, meta)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), b.KeyID()) || !strings.Contains(err.Error(), other.KeyID()) {
		t.Fatalf("wrong key: %v", err)
	}
	if err := CheckKey(ctx, box(t, nil), meta); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), b.KeyID()) {
		t.Fatalf("missing key: %v", err)
	}
}

func TestMaskRules(t *testing.T) {
	if Masked("") != "" || Masked("x") != Mask {
		t.Fatal("Masked")
	}
	if ResolveWrite(Mask, "old") != "old" || ResolveWrite("", "old") != "" || ResolveWrite("new", "old") != "new" {
		t.Fatal("ResolveWrite")
	}
}

// TestReplicasStartingTogetherAgreeOnOneKey: two replicas with different
// keys start on a new database at once; the canary one of them seals
// stands, and the other is refused, whichever wrote first.
func TestReplicasStartingTogetherAgreeOnOneKey(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		meta := &porttest.SettingStore{}
		a, b := box(t, key(t)), box(t, key(t))
		errc := make(chan error, 2)
		for _, bx := range []*Box{a, b} {
			go func() { errc <- CheckKey(ctx, bx, meta) }()
		}
		e1, e2 := <-errc, <-errc
		if (e1 == nil) == (e2 == nil) {
			t.Fatalf("both or neither started: %v / %v", e1, e2)
		}
	}
}

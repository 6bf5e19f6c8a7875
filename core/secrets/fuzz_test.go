package secrets

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzSealOpen: any stored string opens to a value or an error, never a
// panic; every plaintext seals and opens back at its place, with a key
// and without; a sealed value never opens at another place; a sealed
// string altered anywhere never opens as something else.
func FuzzSealOpen(f *testing.F) {
	keyed, err := NewBox(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	plain, err := NewBox(nil)
	if err != nil {
		f.Fatal(err)
	}
	sealed, _ := keyed.Seal("providers.api_key", "sk-secret")
	for _, s := range []string{"", "sk-x", "enc:v2:abc:def", "enc:", "enc:v2:", sealed, "enc:lit:enc:v2:x", "\x00\xff"} {
		f.Add(s, "providers.api_key", uint(3))
	}
	f.Fuzz(func(t *testing.T, text, place string, flip uint) {
		for _, b := range []*Box{keyed, plain} {
			_, _ = b.Open(place, text) // any stored text: a value or an error
			_, _ = SealedKeyID(text)
			s, err := b.Seal(place, text)
			if err != nil {
				t.Fatalf("seal: %v", err)
			}
			got, err := b.Open(place, s)
			if err != nil || got != text {
				t.Fatalf("%q sealed as %q opens as %q, %v", text, s, got, err)
			}
			if !b.Sealing() || text == "" {
				continue
			}
			if got, err := b.Open(place+"x", s); err == nil {
				t.Fatalf("a value sealed at %q opened at another place as %q", place, got)
			}
			// Alter one character of the ciphertext: it must not open as
			// anything but the original.
			i := len(sealedPrefix) + int(flip%uint(len(s)-len(sealedPrefix)))
			altered := s[:i] + string(rune('A'+(s[i]+1)%26)) + s[i+1:]
			if altered != s {
				if got, err := b.Open(place, altered); err == nil && got != text && strings.HasPrefix(altered, sealedPrefix) {
					t.Fatalf("an altered sealed value opened as %q", got)
				}
			}
		}
	})
}

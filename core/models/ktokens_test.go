package models

import "testing"

func TestKTokensWritesCountsAsPeopleReadThem(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 850: "850", 999: "999", 1000: "1.0k", 12345: "12.3k", 1_250_000: "1250.0k"} {
		if got := kTokens(n); got != want {
			t.Errorf("kTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

package models

import (
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

func TestBackoffReadsZeroAsTheDefaultsAndDoublesWithinTheBound(t *testing.T) {
	if b := BackoffOf(domain.AgentResilience{}); b.Retries != 0 {
		t.Fatalf("retries without retry_enabled = %d", b.Retries)
	}
	on := domain.AgentResilience{RetryEnabled: true}
	if b := BackoffOf(on); b.Retries != defaultMaxRetries || b.next != defaultInitialBackoff || b.max != defaultMaxBackoff {
		t.Fatalf("the zero policy = %+v", b)
	}
	on.RetryPolicy.MaxRetries, on.RetryPolicy.InitialBackoffMS, on.RetryPolicy.MaxBackoffMS = 5, 100, 300
	b := BackoffOf(on)
	if b.Retries != 5 {
		t.Fatalf("retries = %d", b.Retries)
	}
	for _, base := range []time.Duration{100, 200, 300, 300} {
		base *= time.Millisecond
		if w := b.Wait(); w < base*8/10 || w > base*12/10 {
			t.Fatalf("wait %v, want %v ±20%%", w, base)
		}
	}
}

package models

import (
	"math/rand/v2"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Retry defaults for an agent with retry_enabled and a zero policy.
const (
	defaultMaxRetries     = 2
	defaultInitialBackoff = 500 * time.Millisecond
	defaultMaxBackoff     = 8 * time.Second
)

// Backoff is an agent's retry policy for the calls to one model: how many
// retries a retryable failure gets, and the wait before each — jittered,
// doubling up to the policy's bound.
type Backoff struct {
	// Retries is how many times a call is retried (0 unless the agent
	// enables retries).
	Retries   int
	next, max time.Duration
}

// BackoffOf is the retry policy an agent's resilience settings describe,
// their zero values read as the defaults.
func BackoffOf(r domain.AgentResilience) Backoff {
	b := Backoff{next: millisOr(r.RetryPolicy.InitialBackoffMS, defaultInitialBackoff),
		max: millisOr(r.RetryPolicy.MaxBackoffMS, defaultMaxBackoff)}
	if r.RetryEnabled {
		b.Retries = r.RetryPolicy.MaxRetries
		if b.Retries == 0 {
			b.Retries = defaultMaxRetries
		}
	}
	return b
}

// Wait is how long to wait before the next retry (the backoff ±20%); the
// one after waits twice as long, within the bound.
func (b *Backoff) Wait() time.Duration {
	wait := time.Duration(float64(b.next) * (0.8 + 0.4*rand.Float64()))
	b.next = min(b.next*2, b.max)
	return wait
}

func millisOr(ms int, def time.Duration) time.Duration {
	if ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// ProviderType names the kind of backend a call goes to, from a bounded
// set (a registry type, or chatgpt for a ChatGPT sign-in, which reaches the
// Codex backend): the provider's own name is whatever a member typed.
func ProviderType(ep ports.ProviderEndpoint) string {
	if ep.AuthMode == domain.AuthChatGPTLogin {
		return "chatgpt"
	}
	return ep.Type
}

// Failure is how a run ends when a model call failed with me: the error
// code and the message its run.error carries. A refused credential is the
// agent's configuration; an overflow says what to do about it, which
// depends on whether the agent folds its history (compacting).
func Failure(me *ports.ModelError, compacting bool) (code, msg string) {
	switch me.Kind {
	case ports.ModelAuth:
		return domain.CodeConfigError, me.Error()
	case ports.ModelOverflow:
		why := "turn compaction on in the agent's settings to fold old history"
		if compacting {
			why = "compaction could not make it lighter; start a new conversation or branch from an earlier message"
		}
		return domain.CodeContextOverflow, "the conversation no longer fits the model's context window (" + me.Error() + "): " + why
	}
	return domain.CodeModelError, me.Error()
}

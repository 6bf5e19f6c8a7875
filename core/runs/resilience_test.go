package runs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestRetryAndFallback(t *testing.T) {
	t.Parallel()
	fail := porttest.Fail
	for _, c := range []struct {
		name           string
		retry          bool
		maxRetries     int
		fallback       string // the fallback's provider: "backup", "gone", or "" for none
		primary        []porttest.Reply
		backup         []porttest.Reply
		want           string
		diagnostics    string // the run.diagnostic types, in order
		primaryCalls   int
		backupCalls    int
		answeredByBack bool
	}{
		{name: "retries until the model answers", retry: true, primary: []porttest.Reply{fail(ports.ModelUnavailable, "overloaded"),
			fail(ports.ModelRateLimited, "slow down"), {Text: "ok"}}, want: "run.output ok",
			diagnostics: "model_retry model_retry", primaryCalls: 3},
		{name: "retries run out, then the fallback answers", retry: true, maxRetries: 1, fallback: "backup",
			primary: []porttest.Reply{fail(ports.ModelUnavailable, "overloaded")}, backup: []porttest.Reply{{Text: "from the backup"}},
			want: "run.output from the backup", diagnostics: "model_retry model_fallback", primaryCalls: 2, backupCalls: 1, answeredByBack: true},
		{name: "a refused request goes straight to the fallback", retry: true, fallback: "backup",
			primary: []porttest.Reply{fail(ports.ModelInvalid, "bad model")}, backup: []porttest.Reply{{Text: "from the backup"}},
			want: "run.output from the backup", diagnostics: "model_fallback", primaryCalls: 1, backupCalls: 1, answeredByBack: true},
		{name: "no retry unless enabled", primary: []porttest.Reply{fail(ports.ModelUnavailable, "overloaded"), {Text: "never"}},
			want: "run.error model_error", primaryCalls: 1},
		{name: "a context overflow takes no fallback", retry: true, fallback: "backup",
			primary: []porttest.Reply{fail(ports.ModelOverflow, "too long")}, backup: []porttest.Reply{{Text: "never"}},
			want: "run.error context_overflow", primaryCalls: 1},
		{name: "the fallback fails too", fallback: "backup", primary: []porttest.Reply{fail(ports.ModelInvalid, "bad model")},
			backup: []porttest.Reply{fail(ports.ModelUnavailable, "down")}, want: "run.error model_error",
			diagnostics: "model_fallback", primaryCalls: 1, backupCalls: 1},
		{name: "a fallback whose provider is gone is skipped", fallback: "gone",
			primary: []porttest.Reply{fail(ports.ModelInvalid, "bad model")}, want: "run.error model_error", primaryCalls: 1},
		{name: "an auth failure of the fallback is the configuration's", fallback: "backup",
			primary: []porttest.Reply{fail(ports.ModelUnavailable, "down")}, backup: []porttest.Reply{fail(ports.ModelAuth, "bad key")},
			want: "run.error config_error", diagnostics: "model_fallback", primaryCalls: 1, backupCalls: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			spec := domain.AgentSpec{Model: "primary", Resilience: domain.AgentResilience{RetryEnabled: c.retry,
				RetryPolicy: domain.RetryPolicy{MaxRetries: c.maxRetries, InitialBackoffMS: 1, MaxBackoffMS: 2}}}
			var backup domain.Provider
			switch c.fallback {
			case "backup":
				backup = h.newProvider("backup")
				spec.Resilience.FallbackModels = []domain.FallbackModel{{ProviderID: backup.ID, Model: "secondary"}}
			case "gone":
				spec.Resilience.FallbackModels = []domain.FallbackModel{{ProviderID: "00000000-0000-7000-8000-00000000dead", Model: "secondary"}}
			}
			h.llm.Route(porttest.ForModel("primary"), c.primary...)
			if c.backup != nil {
				h.llm.Route(porttest.ForModel("secondary"), c.backup...)
			}
			run, events := h.run(spec, "go")
			if got := ending(t, events); got != c.want {
				t.Fatalf("ending = %q, want %q", got, c.want)
			}
			var diags []string
			for _, ev := range ofType(events, domain.EventDiagnostic) {
				d := payload[domain.DiagnosticPayload](t, ev)
				diags = append(diags, d.Type)
				if d.Type == "model_fallback" && (d.Details["provider"] != "backup" || d.Details["model"] != "secondary" || d.Details["fallback_index"] != "1") {
					t.Errorf("fallback diagnostic = %+v", d)
				}
				if d.Type == "model_retry" && (d.Details["model"] != "primary" || d.Code == "") {
					t.Errorf("retry diagnostic = %+v", d)
				}
			}
			if got := strings.Join(diags, " "); got != c.diagnostics {
				t.Errorf("diagnostics = %q, want %q", got, c.diagnostics)
			}
			reqs := h.llm.Requests()
			primary := len(slices.DeleteFunc(slices.Clone(reqs), func(r ports.ModelRequest) bool { return r.Model != "primary" }))
			if primary != c.primaryCalls || len(reqs)-primary != c.backupCalls {
				t.Fatalf("calls: %d primary, %d fallback; want %d and %d", primary, len(reqs)-primary, c.primaryCalls, c.backupCalls)
			}
			for _, r := range reqs {
				if r.Model == "secondary" && (r.Endpoint.Name != "backup" || r.Endpoint.APIKey != "sk-backup") {
					t.Fatalf("the fallback was called at %+v", r.Endpoint)
				}
			}
			retries := h.spans(run.ID, domain.SpanRetry)
			if len(retries) != len(diags) {
				t.Fatalf("%d retry spans for %d diagnostics", len(retries), len(diags))
			}
			gens := h.spans(run.ID, domain.SpanGeneration)
			if len(gens) != len(reqs) {
				t.Fatalf("%d generation spans for %d calls", len(gens), len(reqs))
			}
			if lastGen := gens[len(gens)-1]; c.answeredByBack && (lastGen.Meta["provider_id"] != backup.ID || lastGen.Meta["fallback_index"] != float64(1)) {
				t.Fatalf("the answering call's span = %+v", lastGen.Meta)
			}
		})
	}
}

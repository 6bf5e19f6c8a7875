package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func porttestReply(text string) porttest.Reply {
	return porttest.Reply{Text: text, Usage: domain.Usage{InputTokens: 1000, OutputTokens: 2000}}
}

// BenchmarkStreamedDeltas streams a 2,000-word answer through the model
// port bare and through the meter: the meter passes every delta through
// untouched and works once per call (a budget check before, a record
// after), so its cost per delta is that work spread over the call's
// deltas. Compare the ns/delta of the two.
func BenchmarkStreamedDeltas(b *testing.B) {
	const words = 2000
	text := strings.Repeat("word ", words)
	for _, metered := range []bool{false, true} {
		name := map[bool]string{false: "bare", true: "metered"}[metered]
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
			llm := ports.LLM(f.llm)
			if metered {
				llm = f.meter
			}
			ctx := ports.WithUsageCall(context.Background(), ports.UsageCall{Kind: domain.UsageChat, UserID: "ann", AgentID: "agent-1"})
			req := ports.ModelRequest{Endpoint: ports.ProviderEndpoint{ProviderID: "prov-1", Type: "openai"}, Model: "gpt-4o"}
			deltas := 0
			sink := func(ports.ModelDelta) { deltas++ }
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				f.llm.Queue(porttestReply(text))
				b.StartTimer()
				if _, err := llm.Generate(ctx, req, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(deltas), "ns/delta")
		})
	}
}

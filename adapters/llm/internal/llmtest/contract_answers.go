package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// What a successful call promises: deltas in order as they stream, then the
// completed items, usage, the answering model and an id.

// testText: text streams delta by delta while the stream is open (the
// server holds after the first one until the sink has it), in order, on the
// caller's goroutine, and the final item holds all of it.
func testText(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	text := "Alpha beta gamma, delta epsilon: deltas arrive in order — ünïcödé too."
	s.script("m", scripted.Step{Text: text, ChunkSize: 5})
	g := s.watch.holdAfter(`"Alpha"`)
	first, heldOpen := true, false
	resp, c, err := s.generate(t, context.Background(), s.request("m", User("hi")), func(d ports.ModelDelta) {
		if d.Kind == ports.DeltaText && first {
			first, heldOpen = false, g.holding.Load()
			g.release()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !heldOpen || g.timedOut.Load() {
		t.Error("the first text delta reached the sink only after the stream had moved on: the adapter does not stream")
	}
	got, n := c.Joined(ports.DeltaText)
	if want := (len([]rune(text)) + 4) / 5; got != text || n != want || len(c.Deltas) != n {
		t.Errorf("deltas %q in %d text pieces of %d deltas, want %q in %d", got, n, len(c.Deltas), text, want)
	}
	if len(resp.Output) != 1 || MessageText(t, resp.Output[0]) != text {
		t.Errorf("output %s, want one message of the text", resp.Output)
	}
	if resp.Model != "m" || resp.ResponseID == "" || resp.Refusal != "" {
		t.Errorf("model %q id %q refusal %q", resp.Model, resp.ResponseID, resp.Refusal)
	}
	if recs := s.requests(t); len(recs) != 1 || recs[0].Model != "m" {
		t.Errorf("the server received %d requests: %+v", len(recs), recs)
	}
}

// testNoSink: a nil sink is allowed (titles and the playground pass one);
// the answer is whole.
func testNoSink(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	s.script("m", scripted.Step{Reasoning: "Quietly.", Text: "Nobody watched this stream.", ChunkSize: 3})
	resp, err := s.llm.Generate(context.Background(), s.request("m", User("hi")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || MessageText(t, resp.Output[1]) != "Nobody watched this stream." {
		t.Fatalf("output %s", resp.Output)
	}
}

// testReasoning: reasoning streams as reasoning deltas before any text, and
// comes back as a reasoning item ahead of the message.
func testReasoning(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	reasoning := "First I weigh the options, then I answer."
	s.script("m", scripted.Step{Reasoning: reasoning, Text: "Answer.", ChunkSize: 4})
	req := s.request("m", User("decide"))
	req.Settings.ReasoningEffort = "low"
	resp, c, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, n := c.Joined(ports.DeltaReasoning); got != reasoning || n < 2 {
		t.Errorf("reasoning deltas %q in %d pieces, want %q streamed", got, n, reasoning)
	}
	if got, _ := c.Joined(ports.DeltaText); got != "Answer." {
		t.Errorf("text deltas %q", got)
	}
	sawText := false
	for _, d := range c.Deltas {
		sawText = sawText || d.Kind == ports.DeltaText
		if sawText && d.Kind == ports.DeltaReasoning {
			t.Fatalf("a reasoning delta after the text began: %+v", c.Deltas)
		}
	}
	if len(resp.Output) != 2 {
		t.Fatalf("output %s, want reasoning then message", resp.Output)
	}
	if r := domain.ParseItem(resp.Output[0]); r.Kind() != "reasoning" || r.ReasoningText() != reasoning {
		t.Errorf("reasoning item %s", resp.Output[0])
	}
	if MessageText(t, resp.Output[1]) != "Answer." {
		t.Errorf("message %s", resp.Output[1])
	}
}

// testUsage: every figure reaches domain.Usage as the port reports it;
// reasoning tokens count inside the output tokens, never on top, and are
// told apart where the format reports them (Anthropic's does not).
func testUsage(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	s.script("m", scripted.Step{Reasoning: "Counting.", Text: "Counted.", Usage: &scripted.Usage{
		InputTokens: 1200, OutputTokens: 340, CachedTokens: 800, CacheWriteTokens: 64, ReasoningTokens: 120}})
	req := s.request("m", User("count"))
	req.Settings.ReasoningEffort = "low"
	resp, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.Usage{InputTokens: 1200, OutputTokens: 340, CachedTokens: 800, CacheWriteTokens: 64, TotalTokens: 1540}
	if h.Format != scripted.APIMessages {
		want.ReasoningTokens = 120
	}
	if resp.Usage != want {
		t.Fatalf("usage %+v, want %+v", resp.Usage, want)
	}
}

// testStructuredOutput: an output schema reaches the wire where the format
// takes it, unchanged, and the JSON answer comes back as the message text.
func testStructuredOutput(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},` +
		`"required":["city","temp_c"],"additionalProperties":false}`)
	answer := `{"city":"Paris","temp_c":21.5}`
	s.script("m", scripted.Step{Text: answer, ChunkSize: 7})
	req := s.request("m", User("weather as JSON"))
	req.OutputSchema = schema
	resp, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sent := s.requests(t)[0].OutputSchema(); !jsonEqual(sent, schema) {
		t.Errorf("the request carried schema %s, want %s", sent, schema)
	}
	var got struct {
		City  string  `json:"city"`
		TempC float64 `json:"temp_c"`
	}
	if len(resp.Output) != 1 || json.Unmarshal([]byte(MessageText(t, resp.Output[0])), &got) != nil || got.City != "Paris" || got.TempC != 21.5 {
		t.Errorf("output %s, want the JSON answer %s", resp.Output, answer)
	}
}

// testConcurrentCalls: one adapter serves simultaneous calls, each getting
// its own answer and deltas.
func testConcurrentCalls(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	const n = 8
	for i := range n {
		s.script(fmt.Sprintf("m%d", i), scripted.Step{Text: fmt.Sprintf("answer number %d, streamed", i), ChunkSize: 3})
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprintf("answer number %d, streamed", i)
			var c Collector
			resp, err := s.llm.Generate(context.Background(), s.request(fmt.Sprintf("m%d", i), User("go")), c.Sink)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			// MessageText may not fail t off the test's goroutine
			if got, _ := c.Joined(ports.DeltaText); got != want || len(resp.Output) != 1 || domain.ParseItem(resp.Output[0]).Text() != want {
				t.Errorf("call %d: deltas %q output %s, want %q", i, got, resp.Output, want)
			}
		})
	}
	wg.Wait()
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

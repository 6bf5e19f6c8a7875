package scripted

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestResponsesConversation(t *testing.T) {
	cases := []struct {
		name  string
		input string
		user  string
		step  int
	}{
		{"string input", `"hello"`, "hello", 0},
		{"one user message", `[{"role":"user","content":"hi"}]`, "hi", 0},
		{"typed parts", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]`, "ab", 0},
		{"a tool turn counts once", `[{"role":"user","content":"q"},
			{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"t"}]},
			{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}]`, "q", 1},
		{"two tool turns", `[{"role":"user","content":"q"},
			{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"},
			{"type":"function_call","call_id":"d","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"d","output":"o"}]`, "q", 2},
		{"earlier turns do not count", `[{"role":"user","content":"old"},{"role":"assistant","content":"x"},{"role":"user","content":"new"}]`, "new", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := responsesConversation("m", json.RawMessage(tc.input), len(tc.input))
			if c.lastUser != tc.user || c.afterUser != tc.step {
				t.Fatalf("got %q step %d, want %q step %d", c.lastUser, c.afterUser, tc.user, tc.step)
			}
		})
	}
}

func TestChatAndAnthropicConversation(t *testing.T) {
	var chat []roleMessage
	_ = json.Unmarshal([]byte(`[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"}]},
		{"role":"assistant","content":null,"tool_calls":[]},{"role":"tool","content":"o","tool_call_id":"c"},
		{"role":"assistant","content":"more"}]`), &chat)
	if c := chatConversation("m", chat, 1); c.lastUser != "q" || c.afterUser != 2 {
		t.Fatalf("chat: %+v", c)
	}
	var msgs []roleMessage
	_ = json.Unmarshal([]byte(`[{"role":"user","content":"question"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]}]`), &msgs)
	if c := anthropicConversation("m", msgs, 1); c.lastUser != "question" || c.afterUser != 1 {
		t.Fatalf("anthropic: a tool_result turn was taken for the person speaking: %+v", c)
	}
}

func TestResolve(t *testing.T) {
	s := New(Options{})
	s.SetScript("m", Script{Exchanges: []Exchange{
		{When: "weather", Steps: []Step{{ToolCalls: []ToolCall{{Name: "w"}, {Name: "x", CallID: "mine"}}}, {Text: "sunny"}}},
		{When: "", Steps: []Step{{Text: "fallback"}}},
	}})
	s.SetScript("strict", Script{Exchanges: []Exchange{{When: "only this", Steps: []Step{{Text: "ok"}}}}})

	r := s.resolve(conversation{model: "m", lastUser: "the weather please"})
	if len(r.toolCalls) != 2 || r.toolCalls[0].CallID != "call_0_0_0" || r.toolCalls[0].Arguments != "{}" || r.toolCalls[1].CallID != "mine" {
		t.Fatalf("step 0: %+v", r.toolCalls)
	}
	if r := s.resolve(conversation{model: "m", lastUser: "weather", afterUser: 1}); r.text != "sunny" || r.toolCalls != nil {
		t.Fatalf("step 1: %+v", r)
	}
	if r := s.resolve(conversation{model: "m", lastUser: "weather", afterUser: 2}); r.text != "[scripted: exchange has no step 2]" {
		t.Fatalf("past the last step: %q", r.text)
	}
	if r := s.resolve(conversation{model: "m", lastUser: "anything"}); r.text != "fallback" {
		t.Fatalf("catch-all exchange: %q", r.text)
	}
	if r := s.resolve(conversation{model: "unknown", lastUser: "hey"}); r.text != "You said: hey" {
		t.Fatalf("unknown model: %q", r.text)
	}
	if r := s.resolve(conversation{model: "strict", lastUser: "other"}); r.text != `[scripted: no exchange matches "other"]` {
		t.Fatalf("no match: %q", r.text)
	}
	if r := s.resolve(conversation{model: "m", lastUser: "x", inputSize: 400}); r.usage.InputTokens != 100 || r.usage.OutputTokens != 2 {
		t.Fatalf("estimated usage %+v", r.usage)
	}
}

func TestFailTimesCountsPerStepAndResets(t *testing.T) {
	s := New(Options{})
	script := Script{Exchanges: []Exchange{{Steps: []Step{
		{Text: "a", FailTimes: 2, Error: &Failure{Status: 429}},
		{Text: "b", FailTimes: 1},
	}}}}
	s.SetScript("m", script)
	outcome := func(step int) string {
		r := s.resolve(conversation{model: "m", afterUser: step})
		if r.failure != nil {
			return fmt.Sprint(r.failure.Status)
		}
		return r.text
	}
	got := []string{outcome(0), outcome(1), outcome(0), outcome(0), outcome(1)}
	want := []string{"429", "500", "429", "a", "b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	s.SetScript("m", script)
	if outcome(0) != "429" {
		t.Fatal("SetScript did not restart the counts")
	}
	s.SetScript("always", Script{Exchanges: []Exchange{{Steps: []Step{{Error: &Failure{Overflow: true}}}}}})
	for range 3 {
		if r := s.resolve(conversation{model: "always"}); r.failure == nil || !r.failure.Overflow {
			t.Fatal("an Error without FailTimes must always fail")
		}
	}
}

func TestChunks(t *testing.T) {
	if got := chunks("héllo wörld", 4); fmt.Sprint(got) != "[héll o wö rld]" {
		t.Fatalf("%q", got)
	}
	if chunks("", 8) != nil {
		t.Fatal("empty text has no chunks")
	}
}

// Two conversations on one model taking turns at once (a run and the
// task it spawned) keep their own exchanges, whichever order their calls
// reach the server in.
func TestInterleavedTurnsKeepTheirOwnExchanges(t *testing.T) {
	s := New(Options{})
	s.SetScript("m", Script{Exchanges: []Exchange{
		{When: "JOB", Steps: []Step{{Text: "job 0"}, {Text: "job 1"}}},
		{Steps: []Step{{Text: "parent 0"}, {Text: "parent 1"}}},
	}})
	got := []string{
		s.resolve(conversation{model: "m", lastUser: "go deep"}).text,
		s.resolve(conversation{model: "m", lastUser: "JOB"}).text,
		s.resolve(conversation{model: "m", lastUser: "go deep", afterUser: 1}).text,
		s.resolve(conversation{model: "m", lastUser: "JOB", afterUser: 1}).text,
	}
	if want := []string{"parent 0", "job 0", "parent 1", "job 1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Tool loops: the calls of one turn come back as items with their ids and
// intact arguments, and the next call hands them back with their outputs.

// testParallelToolCalls: several calls in one turn, each streaming its own
// argument deltas under its call id and name; the next request carries
// every call and its output, paired by id, and the model moves on.
func testParallelToolCalls(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	calls := []scripted.ToolCall{
		{Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		{Name: "get_weather", Arguments: `{"city":"Zürich","unit":"celsius"}`},
		{Name: "get_time", Arguments: `{"zone":"Europe/Paris","formats":["24h",{"seconds":false}]}`},
	}
	final := "Sunny in Paris, snow in Zürich, and it is noon."
	s.script("m", scripted.Step{Text: "Checking three things.", ToolCalls: calls, ChunkSize: 6}, scripted.Step{Text: final})
	req := s.request("m", User("weather in Paris and Zürich, and the time?"))
	req.Tools = []ports.ToolDef{
		{Name: "get_weather", Description: "Weather by city",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}`)},
		{Name: "get_time", Description: "Time in a zone",
			Parameters: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"]}`)},
	}
	first, c, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Output) != 1+len(calls) || MessageText(t, first.Output[0]) != "Checking three things." {
		t.Fatalf("output %s, want the message then %d calls", first.Output, len(calls))
	}
	ids := make([]string, len(calls))
	for i, want := range calls {
		ids[i] = fmt.Sprintf("call_0_0_%d", i) // the scripted server's ids
		it := domain.ParseItem(first.Output[1+i])
		if it.Kind() != "function_call" || it.CallID != ids[i] || it.Name != want.Name || it.Arguments != want.Arguments {
			t.Errorf("call %d is %s, want %s %s(%s)", i, first.Output[1+i], ids[i], want.Name, want.Arguments)
		}
	}
	streamed := map[string]*strings.Builder{}
	for _, d := range c.Deltas {
		if d.Kind != ports.DeltaArguments {
			continue
		}
		i := slices.Index(ids, d.CallID)
		if i < 0 || d.Name != calls[i].Name {
			t.Fatalf("an arguments delta names call %q %q, not one of the turn's", d.CallID, d.Name)
		}
		if streamed[d.CallID] == nil {
			streamed[d.CallID] = &strings.Builder{}
		}
		streamed[d.CallID].WriteString(d.Text)
	}
	for i, id := range ids {
		if b := streamed[id]; b == nil || b.String() != calls[i].Arguments {
			t.Errorf("call %s streamed arguments %v, want %s", id, b, calls[i].Arguments)
		}
	}

	outputs := map[string]string{}
	req.Input = append(slices.Clone(req.Input), first.Output...)
	for i, id := range ids {
		outputs[id] = fmt.Sprintf("result %d: fine", i)
		req.Input = append(req.Input, domain.FunctionCallOutput(id, outputs[id]))
	}
	second, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Output) != 1 || MessageText(t, second.Output[0]) != final {
		t.Errorf("second output %s, want %q: the server did not read one tool turn", second.Output, final)
	}
	hist := s.requests(t)[1].History()
	if len(hist.Calls) != len(calls) {
		t.Fatalf("the second request handed back calls %+v", hist.Calls)
	}
	for i, got := range hist.Calls {
		if got.CallID != ids[i] || got.Name != calls[i].Name || !jsonEqual([]byte(got.Arguments), []byte(calls[i].Arguments)) {
			t.Errorf("handed-back call %d is %+v, want %s %s(%s)", i, got, ids[i], calls[i].Name, calls[i].Arguments)
		}
	}
	if !maps.Equal(hist.Outputs, outputs) {
		t.Errorf("handed-back outputs %v, want %v", hist.Outputs, outputs)
	}
}

// testReasoningHandedBack: the reasoning item of a tool turn reaches the
// provider again with the tool output, so the model continues its own
// thought; reasoning made elsewhere (no id or signature of this provider)
// never does, and the message after it still goes.
func testReasoningHandedBack(t *testing.T, h Harness) {
	h.needs(t, ReasoningHandedBack)
	s := newStage(t, h, scripted.Options{})
	reasoning := "The answer needs a lookup first."
	s.script("m", scripted.Step{Reasoning: reasoning, ToolCalls: []scripted.ToolCall{{Name: "lookup", Arguments: `{"q":"x"}`}}},
		scripted.Step{Text: "Looked it up."})
	foreign := domain.Reasoning("", "Thoughts of another provider.", "", "opaque-from-elsewhere")
	req := s.request("m", User("an earlier question"), foreign, domain.AssistantMessage("", "Earlier answer."), User("look it up"))
	req.Settings.ReasoningEffort = "low"
	req.Tools = []ports.ToolDef{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}
	first, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Output) != 2 || domain.ParseItem(first.Output[0]).Kind() != "reasoning" {
		t.Fatalf("output %s, want reasoning then the call", first.Output)
	}
	req.Input = append(append(slices.Clone(req.Input), first.Output...), domain.FunctionCallOutput("call_0_0_0", "x is 42"))
	second, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Output) != 1 || MessageText(t, second.Output[0]) != "Looked it up." {
		t.Errorf("second output %s", second.Output)
	}
	recs := s.requests(t)
	if got := recs[0].History().Reasoning; len(got) != 0 {
		t.Errorf("the first request handed back reasoning made elsewhere: %q", got)
	}
	if got := recs[1].History().Reasoning; !slices.Equal(got, []string{reasoning}) {
		t.Errorf("the second request handed back reasoning %q, want [%q]", got, reasoning)
	}
	if !strings.Contains(string(recs[1].Body), "Earlier answer.") {
		t.Errorf("the message after the foreign reasoning was lost: %s", recs[1].Body)
	}
}

package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// The record outlives the process that wrote it: a flight written before
// a restart must read the same after it, so its JSON keys are fixed.
func TestAFlightReadsBackAsItWasStored(t *testing.T) {
	stored := `{"turn":[{"type":"function_call"}],"usage":{"input_tokens":3},"calls":[{"call":{"type":"function_call",` +
		`"call_id":"c1","name":"exec_command"},"origin":"sandbox"},{"call":{"type":"function_call","call_id":"c2","name":"rm"},` +
		`"rejected":"no"}],"agent":{"ID":"sp1","Name":"coder","AgentConfigID":"a1","StartedAt":"2026-01-02T03:04:05Z"},` +
		`"at":"2026-01-02T03:04:06Z"}`
	f, err := Decode(stored)
	if err != nil || len(f.Turn) != 1 || f.Usage == nil || len(f.Calls) != 2 || f.Calls[0].Origin != "sandbox" ||
		f.Calls[1].Rejected == nil || *f.Calls[1].Rejected != "no" || f.Agent.ID != "sp1" || f.Agent.AgentConfigID != "a1" {
		t.Fatalf("Decode = %+v, %v", f, err)
	}
	raw, _ := json.Marshal(f)
	for _, key := range []string{`"turn":`, `"usage":`, `"calls":`, `"call_id":"c1"`, `"origin":"sandbox"`, `"rejected":"no"`,
		`"agent":{"ID":"sp1","Name":"coder","AgentConfigID":"a1"`, `"at":"2026-01-02T03:04:06Z"`} {
		if !strings.Contains(string(raw), key) {
			t.Fatalf("the encoded flight lacks %s: %s", key, raw)
		}
	}
}

func TestALandedFlightTracesTheCallsThatWereToRunUnderTheirAgent(t *testing.T) {
	no := "no"
	f := Flight{Calls: []Call{{Call: domain.Item{CallID: "c1", Name: "exec_command"}, Origin: "sandbox"},
		{Call: domain.Item{CallID: "c2", Name: "rm"}, Rejected: &no}}, Agent: Span{ID: "sp1", Name: "coder"}}
	n := 0
	spans := f.Spans(domain.Run{ID: "r1", SessionID: "s1"}, time.Unix(9, 0), func() string { n++; return "new" })
	if len(spans) != 2 || n != 1 {
		t.Fatalf("spans = %+v (ids drawn %d); want the run call's and the agent's", spans, n)
	}
	if c := spans[0]; c.Kind != domain.SpanFunction || c.ParentID != "sp1" || c.Error != UnknownOutcome || c.Meta["call_id"] != "c1" {
		t.Fatalf("the call's span = %+v", c)
	}
	if a := spans[1]; a.Kind != domain.SpanAgent || a.ID != "sp1" || a.EndedAt != time.Unix(9, 0) {
		t.Fatalf("the agent's span = %+v", a)
	}
	if spans := (Flight{Calls: f.Calls[1:]}).Spans(domain.Run{}, time.Unix(9, 0), nil); len(spans) != 0 {
		t.Fatalf("a flight of rejected calls without an agent span left spans: %+v", spans)
	}
}

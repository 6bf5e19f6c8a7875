package transcript

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

func TestATurnRecordsItsItemsThenItsOutputs(t *testing.T) {
	resp := ports.ModelResponse{Output: []json.RawMessage{json.RawMessage(`{"type":"reasoning"}`), json.RawMessage(`{"type":"function_call"}`)},
		Usage: domain.Usage{TotalTokens: 9}}
	results := []Result{{CallID: "c1", Name: "calc", Output: "4"}, {CallID: "c2", Name: "boom", Output: "no", IsError: true}}
	got := Record("run", true, resp, results)
	if len(got) != 4 || got[0].Usage != nil || got[1].Usage == nil || got[1].Usage.TotalTokens != 9 {
		t.Fatalf("entries %+v: want the model's two items (usage on the last), then two outputs", got)
	}
	if got[2].Source != domain.SourceTool || got[2].Display != nil || !strings.Contains(string(got[2].Item), `"c1"`) {
		t.Fatalf("a plain output is %+v", got[2])
	}
	if d := got[3].Display; d == nil || !d.IsError || d.Kind != "error" {
		t.Fatalf("an error's card is %+v", d)
	}
	if resumed := Record("run", false, resp, results); len(resumed) != 2 || resumed[0].Source != domain.SourceTool {
		t.Fatalf("a resumed turn records %+v; want its outputs alone", resumed)
	}
	empty := TurnEntries("run", ports.ModelResponse{Usage: domain.Usage{TotalTokens: 3}}, nil)
	if len(empty) != 1 || empty[0].Kind != domain.KindAnnotation || empty[0].Usage.TotalTokens != 3 {
		t.Fatalf("a call that produced nothing records %+v; want its usage kept", empty)
	}
}

func TestALandedFlightAnswersEveryCall(t *testing.T) {
	reason := "not now"
	f := Flight{Calls: []Call{{Call: domain.Item{CallID: "a", Name: "deploy"}}, {Call: domain.Item{CallID: "b", Name: "submit_plan"},
		Rejected: &reason}}}
	got := f.Landing()
	if len(got) != 2 || got[0].Output != UnknownOutcome || !got[0].IsError || got[0].Display.Kind != "interrupted" {
		t.Fatalf("the cut-off call lands as %+v", got[0])
	}
	if !strings.Contains(got[1].Output, "did not accept the plan") || !strings.HasSuffix(got[1].Output, "Their reason: not now") ||
		got[1].Display.Kind != "rejected" {
		t.Fatalf("the rejected plan lands as %+v", got[1])
	}
	if r := Rejected(domain.Item{CallID: "x", Name: "rm"}, ""); r.Output != "The person rejected this call; it did not run." {
		t.Fatalf("a rejection without reason says %q", r.Output)
	}
}

package transcript

import (
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// Result is one answered call of a turn.
type Result struct {
	CallID, Name, Output string
	IsError              bool
	Display              *domain.Display
	// CutOff says a cancel decided it: the call did not finish.
	CutOff bool
}

// Rejected is the answer to a call a person rejected, with their reason.
func Rejected(call domain.Item, reason string) Result {
	out := "The person rejected this call; it did not run."
	if call.Name == tools.SubmitPlan.Name {
		out = "The person did not accept the plan; planning mode goes on. Revise the plan and submit it again."
	}
	if reason != "" {
		out += " Their reason: " + reason
	}
	return Result{CallID: call.CallID, Name: call.Name, Output: out,
		Display: &domain.Display{Kind: "rejected", Title: call.Name + " rejected", Summary: reason}}
}

// Record is what a turn records: its model items and tool outputs, or
// (modelTurn false: a resumed turn, whose items its pause recorded) the
// outputs alone.
func Record(runID string, modelTurn bool, resp ports.ModelResponse, results []Result) []domain.Entry {
	if modelTurn {
		return TurnEntries(runID, resp, results)
	}
	return outputEntries(runID, results)
}

// TurnEntries are the entries a turn appends in one transaction: the
// model's output items (the call's usage on the last of them), then the
// tool outputs.
func TurnEntries(runID string, resp ports.ModelResponse, results []Result) []domain.Entry {
	var out []domain.Entry
	for i, raw := range resp.Output {
		e := domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: runID, Item: raw}
		if i == len(resp.Output)-1 {
			u := resp.Usage
			e.Usage = &u
		}
		out = append(out, e)
	}
	if len(resp.Output) == 0 {
		// A call that produced nothing still cost something: keep its usage.
		u := resp.Usage
		out = append(out, domain.Entry{Kind: domain.KindAnnotation, RunID: runID, Usage: &u, Text: "The model returned no output."})
	}
	return append(out, outputEntries(runID, results)...)
}

// outputEntries record a turn's tool outputs.
func outputEntries(runID string, results []Result) []domain.Entry {
	out := make([]domain.Entry, 0, len(results))
	for _, r := range results {
		out = append(out, domain.Entry{Kind: domain.KindItem, Source: domain.SourceTool, RunID: runID,
			Item: domain.FunctionCallOutput(r.CallID, r.Output), Display: r.display()})
	}
	return out
}

// display is how the result's card shows: an error is marked as one.
func (r Result) display() *domain.Display {
	d := r.Display
	if r.IsError {
		if d == nil {
			d = &domain.Display{}
		}
		if d.Kind == "" {
			d.Kind = "error"
		}
		d.IsError = true
	}
	return d
}

// Landing is what a crash leaves of the flight's calls: each answered with
// the unknown outcome, unless a person had rejected it.
func (f Flight) Landing() []Result {
	results := make([]Result, 0, len(f.Calls))
	for _, fc := range f.Calls {
		c := fc.Call
		if fc.Rejected != nil {
			results = append(results, Rejected(c, *fc.Rejected))
			continue
		}
		results = append(results, Result{CallID: c.CallID, Name: c.Name, Output: UnknownOutcome, IsError: true,
			Display: &domain.Display{Kind: "interrupted", Title: c.Name + " cut off by a restart", Summary: "Result unknown"}})
	}
	return results
}

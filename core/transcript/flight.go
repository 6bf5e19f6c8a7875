// Package transcript shapes what a run leaves in its conversation: each
// tool call's answer (Result) and the entries a turn records (Record), the
// note saying how a run that did not complete ended, an answer cut short,
// and the record of a turn's calls in flight — written before the calls
// run, so that a restart after a crash keeps them in the conversation,
// with an unknown outcome, instead of letting them vanish (a call may
// reach the world, an MCP server or a sandbox, and then the process dies:
// without the record the model may make it again). core/runs writes these
// records and lands them; this package holds their shape and the rules
// that need no live run.
package transcript

import (
	"encoding/json"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// UnknownOutcome is what the model reads of a call a restart cut off: it
// may have taken effect, so it is not to be repeated blindly.
const UnknownOutcome = "The server restarted during this call; its result is unknown. It may or may not have taken effect: " +
	"check before calling it again."

// StoppedOutcome is what the model reads of a call a cancel cut off.
const StoppedOutcome = "The run was stopped during this call; its result is unknown. It may or may not have taken effect: " +
	"check before calling it again."

// NotRun answers a call a cancel came before: it never started.
func NotRun(call domain.Item) Result {
	return Result{CallID: call.CallID, Name: call.Name, Output: "The run was stopped before this call ran.", IsError: true, CutOff: true,
		Display: &domain.Display{Kind: "stopped", Title: call.Name + " not run", Summary: "Stopped before it ran"}}
}

// Stopped answers a call a cancel cut off while it ran: its outcome is
// unknown (StoppedOutcome).
func Stopped(call domain.Item) Result {
	return Result{CallID: call.CallID, Name: call.Name, Output: StoppedOutcome, IsError: true, CutOff: true,
		Display: &domain.Display{Kind: "interrupted", Title: call.Name + " stopped", Summary: "Result unknown"}}
}

// Flight is a turn's tool calls as recorded before they run (the runs
// table's calls_in_flight, as JSON).
type Flight struct {
	// Turn is the model's items of the turn and Usage their cost, when
	// they are not recorded yet (a resumed turn's were, at its pause).
	Turn  []json.RawMessage `json:"turn,omitempty"`
	Usage *domain.Usage     `json:"usage,omitempty"`
	Calls []Call            `json:"calls"`
	// Agent is the open span of the agent running the turn: the parent of
	// the calls' spans, which the restart records too.
	Agent Span      `json:"agent"`
	At    time.Time `json:"at"`
}

// Call is one call of the turn; a rejected one is answered already.
type Call struct {
	Call     domain.Item `json:"call"`
	Origin   string      `json:"origin,omitempty"`
	Rejected *string     `json:"rejected,omitempty"` // the person's reason, when they rejected it
}

// Span is an open span as the restart records it.
type Span struct {
	ID, Name, AgentConfigID string
	StartedAt               time.Time
}

// NewFlight is the record of calls about to run, at at: the turn's items
// and cost when the model's turn is not recorded yet (modelTurn), each
// call with the origin of the tool it calls (origin) and, when the person
// rejected it, their reason (rejected, by call id), under agent's span.
func NewFlight(at time.Time, modelTurn bool, output []json.RawMessage, usage domain.Usage, calls []domain.Item,
	origin func(name string) string, rejected map[string]string, agent Span) Flight {
	f := Flight{At: at, Agent: agent}
	if modelTurn {
		f.Turn, f.Usage = output, &usage
	}
	for _, c := range calls {
		fc := Call{Call: c, Origin: origin(c.Name)}
		if reason, no := rejected[c.CallID]; no {
			fc.Rejected = &reason
		}
		f.Calls = append(f.Calls, fc)
	}
	return f
}

// Encode is the flight as it is stored.
func (f Flight) Encode() (string, error) {
	raw, err := json.Marshal(f)
	return string(raw), err
}

// Decode reads a stored flight.
func Decode(raw string) (Flight, error) {
	var f Flight
	err := json.Unmarshal([]byte(raw), &f)
	return f, err
}

// Spans are what a crash left of the flight's trace, for run r ended at
// now: a function span per call that was to run, failed with the unknown
// outcome, under its agent's span — closed too, since its run's end, which
// closes it, never came (without it the calls' spans would have no
// parent). Each new span's id comes from newID.
func (f Flight) Spans(r domain.Run, now time.Time, newID func() string) []domain.Span {
	var out []domain.Span
	for _, fc := range f.Calls {
		if fc.Rejected != nil {
			continue
		}
		c := fc.Call
		out = append(out, domain.Span{ID: newID(), SessionID: r.SessionID, RunID: r.ID, ParentID: f.Agent.ID,
			Kind: domain.SpanFunction, Name: c.Name, StartedAt: f.At, EndedAt: now, Error: UnknownOutcome,
			Meta: map[string]any{"tool": c.Name, "call_id": c.CallID, "origin": fc.Origin, "outcome": "unknown"}})
	}
	if f.Agent.ID != "" {
		out = append(out, domain.Span{ID: f.Agent.ID, SessionID: r.SessionID, RunID: r.ID, Kind: domain.SpanAgent,
			Name: f.Agent.Name, StartedAt: f.Agent.StartedAt, EndedAt: now, Error: "the server restarted during this run",
			Meta: map[string]any{"agent_config_id": f.Agent.AgentConfigID}})
	}
	return out
}

// Answered reports whether a conversation's history holds an output of
// the call: its turn was recorded before the crash, and its flight is not
// to be landed again.
func Answered(history []domain.Entry, callID string) bool {
	for _, e := range history {
		if it := domain.ParseItem(e.Item); it.Kind() == domain.ItemFunctionCallOutput && it.CallID == callID {
			return true
		}
	}
	return false
}

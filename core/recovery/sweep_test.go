package recovery_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/recovery"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var ann = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}

// heard is a listener (and an observer) that keeps what it was told.
type heard struct {
	recovered []domain.Run
	spans     []domain.Span
}

func (h *heard) Ending(context.Context, domain.Run, bool) func(tx ports.SessionTx) error { return nil }
func (h *heard) Paused(domain.Run, string)                                               {}
func (h *heard) Resumed(domain.Run)                                                      {}
func (h *heard) Ended(domain.Run)                                                        {}
func (h *heard) Recovered(r domain.Run)                                                  { h.recovered = append(h.recovered, r) }
func (h *heard) RunEnded(domain.Run)                                                     {}
func (h *heard) SpanSaved(s domain.Span)                                                 { h.spans = append(h.spans, s) }

type world struct {
	runs     *porttest.RunStore
	traces   *porttest.TraceStore
	sessions *sessions.Journal
	store    *porttest.SessionStore
	hub      *hub.Hub
	heard    *heard
	sweep    *recovery.Sweep
	clock    *porttest.Clock
}

func setup(t *testing.T) *world {
	t.Helper()
	w := &world{runs: &porttest.RunStore{}, traces: &porttest.TraceStore{}, store: &porttest.SessionStore{}, heard: &heard{}, clock: porttest.NewClock(time.Unix(1e9, 0))}
	ids := &porttest.IDs{}
	w.sessions = sessions.NewJournal(sessions.Deps{Store: w.store, Agents: &porttest.ConfigStore{}, Traces: w.traces,
		Runs: w.runs, IDs: ids, Clock: w.clock})
	w.hub = hub.New(hub.Options{}, w.clock, nil, nil)
	w.sweep = recovery.New(recovery.Deps{Runs: w.runs, Sessions: w.sessions, Traces: w.traces, Observer: w.heard, Hub: w.hub,
		Listeners: []runs.Listener{w.heard}, Replica: "me", Clock: w.clock, IDs: ids, Log: slog.New(slog.DiscardHandler)})
	return w
}

// orphan is a run a crash left running in a new session of ann's.
func (w *world) orphan(t *testing.T, id string) domain.Run {
	t.Helper()
	ctx := context.Background()
	sess, err := w.sessions.Create(ctx, ann, "lost", "")
	if err != nil {
		t.Fatal(err)
	}
	r := domain.Run{ID: id, SessionID: sess.ID, OwnerID: ann.User.ID, Status: domain.RunRunning, Replica: "me",
		CreatedAt: w.clock.Now(), UpdatedAt: w.clock.Now()}
	if err := w.runs.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	return r
}

func (w *world) story(t *testing.T, sessionID string) string {
	t.Helper()
	history, err := w.store.Entries(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range history {
		it := domain.ParseItem(e.Item)
		switch {
		case e.Kind == domain.KindAnnotation:
			out = append(out, "note: "+e.Text)
		case it.Kind() == domain.ItemFunctionCallOutput:
			out = append(out, "output "+it.CallID)
		default:
			out = append(out, string(it.Kind()))
		}
	}
	return strings.Join(out, " | ")
}

func TestTheSweepRecordsWhatACrashCutOff(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	r := w.orphan(t, "r1")
	call := domain.Item{Type: "function_call", CallID: "c1", Name: "deploy", Arguments: "{}"}
	raw, _ := json.Marshal(call)
	f, _ := json.Marshal(transcript.Flight{Turn: []json.RawMessage{raw}, Usage: &domain.Usage{TotalTokens: 7},
		Calls: []transcript.Call{{Call: call, Origin: "mcp"}}, Agent: transcript.Span{ID: "agent-span", Name: "helper"}, At: w.clock.Now()})
	if err := w.runs.RecordCallsInFlight(ctx, r.ID, string(f)); err != nil {
		t.Fatal(err)
	}
	if err := w.runs.CheckpointRun(ctx, r.ID, 12, "half an answ"); err != nil {
		t.Fatal(err)
	}
	ended, err := w.sweep.RecoverOrphans(ctx, w.clock.Now(), true)
	if err != nil || len(ended) != 1 {
		t.Fatalf("ended %+v, %v", ended, err)
	}
	want := "function_call | output c1 | message | note: The server restarted during this run; it ended with an error."
	if got := w.story(t, r.SessionID); got != want {
		t.Fatalf("the conversation holds %q\nwant %q", got, want)
	}
	spans := map[string]domain.Span{}
	for _, sp := range w.traces.Spans() {
		spans[sp.Kind] = sp
	}
	if fn, agent := spans[domain.SpanFunction], spans[domain.SpanAgent]; len(spans) != 2 || fn.Meta["outcome"] != "unknown" ||
		fn.ParentID != "agent-span" || agent.ID != "agent-span" || agent.EndedAt.IsZero() || len(w.heard.spans) != 2 {
		t.Fatalf("spans %+v (observed %d): want the call's failed span under its agent's, closed", spans, len(w.heard.spans))
	}
	if len(w.heard.recovered) != 1 || w.heard.recovered[0].ErrorCode != domain.CodeServerRestarted || w.heard.recovered[0].EndedAt == nil {
		t.Fatalf("the listeners heard %+v", w.heard.recovered)
	}
	if row, _ := w.runs.FindRun(ctx, r.ID); row.Status != domain.RunError {
		t.Fatalf("the run's row is %+v", row)
	}
	// A second sweep (another restart) finds nothing left to end.
	if again, err := w.sweep.RecoverOrphans(ctx, w.clock.Now(), true); err != nil || len(again) != 0 {
		t.Fatalf("a second sweep ended %+v, %v", again, err)
	}
}

func TestTheSweepRecordsAFlightWhoseOutputsLandedOnlyOnce(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	r := w.orphan(t, "r2")
	call := domain.Item{Type: "function_call", CallID: "c9", Name: "calc"}
	if _, err := w.sessions.Append(ctx, r.SessionID, transcript.Record(r.ID, false, ports.ModelResponse{},
		[]transcript.Result{{CallID: "c9", Name: "calc", Output: "4"}})); err != nil {
		t.Fatal(err)
	}
	f, _ := json.Marshal(transcript.Flight{Calls: []transcript.Call{{Call: call}}})
	_ = w.runs.RecordCallsInFlight(ctx, r.ID, string(f))
	if _, err := w.sweep.RecoverOrphans(ctx, w.clock.Now(), true); err != nil {
		t.Fatal(err)
	}
	if got := w.story(t, r.SessionID); got != "output c9 | note: The server restarted during this run; it ended with an error." {
		t.Fatalf("the conversation holds %q", got)
	}
	if len(w.traces.Spans()) != 0 {
		t.Fatal("a landed flight's spans were recorded again")
	}
}

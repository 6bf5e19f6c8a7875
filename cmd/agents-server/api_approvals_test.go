package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// gatedScript calls todo_write (gated by the agent) then answers; "twice"
// makes two gated calls in one turn.
func gatedScript() scripted.Script {
	todo := func(item string) scripted.ToolCall {
		return scripted.ToolCall{Name: "todo_write", Arguments: `{"todos":[{"content":"` + item + `","status":"pending"}]}`}
	}
	return scripted.Script{Exchanges: []scripted.Exchange{
		{When: "twice", Steps: []scripted.Step{{Text: "Two things.", ToolCalls: []scripted.ToolCall{todo("a"), todo("b")}}, {Text: "both handled"}}},
		{Steps: []scripted.Step{{Text: "Let me note that.", ToolCalls: []scripted.ToolCall{todo("x")}}, {Text: "all done"}}},
	}}
}

// gatedSession makes an agent whose todo_write waits for approval, and a
// session on it.
func (h *harness) gatedSession(token, url string) httpapi.SessionView {
	h.t.Helper()
	agent := h.agentOn(token, protocols(url)["openai-responses"], map[string]any{"name": "careful", "model": "gated",
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	return h.createSession(token, map[string]any{"agent_config_id": agent, "name": "gated"})
}

func (h *harness) approvals(token, sessionID string) []httpapi.ApprovalView {
	h.t.Helper()
	var out []httpapi.ApprovalView
	path := "/api/v1/approvals"
	if sessionID != "" {
		path = "/api/v1/sessions/" + sessionID + "/approvals"
	}
	h.call("GET", path, token, nil).want(h.t, 200).decode(h.t, &out)
	return out
}

// untilType reads an SSE stream until an event of typ.
func untilType(t *testing.T, s *sseStream, typ string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			t.Fatalf("stream ended before %s (after %d events)", typ, len(out))
		}
		out = append(out, ev)
		if ev.Type == typ {
			return out
		}
	}
}

func TestApprovalPausesAndTheSameRunContinues(t *testing.T) {
	t.Parallel()
	w := startPausedRun(t, "appr")
	h, tok, run, sse, before, sid := w.h, w.token, w.runID, w.stream, w.seen, w.sessID
	var call domain.ToolCallPayload
	for _, ev := range before {
		if ev.Type == domain.EventToolCall {
			call = payload[domain.ToolCallPayload](t, ev.Event)
		}
	}
	if !call.NeedsApproval || call.ToolName != "todo_write" {
		t.Fatalf("tool call = %+v", call)
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
	if r.Status != "interrupted" {
		t.Fatalf("paused run = %+v", r)
	}
	pending := h.approvals(tok, sid)
	if len(pending) != 1 || pending[0].ToolCallID != call.ToolCallID || pending[0].RunID != run || h.approvals(tok, "")[0].ID != pending[0].ID {
		t.Fatalf("pending = %+v", pending)
	}
	// The transcript already shows the assistant's turn while it waits.
	if msgs := h.messages(tok, sid, ""); len(msgs) != 3 {
		t.Fatalf("%d entries while paused", len(msgs))
	}
	var d httpapi.DecisionView
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).want(t, 200).decode(t, &d)
	if d.RunID != run || d.Status != "running" {
		t.Fatalf("decision = %+v", d)
	}
	after := sse.all(t) // the same connection carries the resumed events
	last := before[len(before)-1].ID
	for _, ev := range after {
		if ev.ID != 0 && ev.ID != last+1 {
			t.Fatalf("sequence broke: %d after %d", ev.ID, last)
		}
		if ev.ID != 0 {
			last = ev.ID
		}
		if ev.Type == domain.EventRunStarted {
			t.Fatal("a resume announced a new run")
		}
	}
	if p := payload[domain.OutputPayload](t, lastEvent(after).Event); p.FinalOutput != "all done" || p.RunID != run {
		t.Fatalf("final = %+v", p)
	}
	if got := h.approvals(tok, sid); len(got) != 0 {
		t.Fatalf("approvals left: %+v", got)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).wantErr(t, 404, "not_found")
	msgs := h.messages(tok, sid, "")
	if len(msgs) != 5 || domain.ParseItem(msgs[3].Item).Kind() != "function_call_output" || msgs[3].Display.Renderer != "todo" {
		t.Fatalf("transcript after resume: %d entries", len(msgs))
	}
}

// pausedOnTwo is a member's run paused on two gated calls, watched over
// the member's WebSocket.
type pausedOnTwo struct {
	h       *harness
	model   *scripted.Server
	token   string
	ws      *wsClient
	run     string
	pending []httpapi.ApprovalView
}

// pauseOnTwoCalls starts a member's run that pauses on two gated calls.
func pauseOnTwoCalls(t *testing.T, member string) pausedOnTwo {
	t.Helper()
	model, url := startScripted(t)
	model.SetScript("gated", gatedScript())
	h := startServer(t, testConfig(t))
	tok := h.member(member)
	s := h.gatedSession(tok, url)
	ws := h.dialWS(tok)
	run := h.startRun(tok, s.ID, map[string]any{"input": "do it twice"})
	for ev := ws.read(); ev.Type != domain.EventInterrupted; ev = ws.read() {
	}
	pending := h.approvals(tok, s.ID)
	if len(pending) != 2 {
		t.Fatalf("%d pending", len(pending))
	}
	return pausedOnTwo{h: h, model: model, token: tok, ws: ws, run: run, pending: pending}
}

func TestRejectionReasonReachesTheModelAndTwoCallsAreDecidedOneByOne(t *testing.T) {
	t.Parallel()
	p := pauseOnTwoCalls(t, "rej")
	h, model, tok, ws, run, pending := p.h, p.model, p.token, p.ws, p.run, p.pending
	var d httpapi.DecisionView
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/reject", tok, map[string]any{"reason": "not that list"}).want(t, 200).decode(t, &d)
	if d.Status != "interrupted" {
		t.Fatalf("after one of two: %+v", d)
	}
	// The second decision comes over the WebSocket and resumes the run.
	ws.send("tool.approve", map[string]any{"tool_call_id": pending[1].ToolCallID})
	events := ws.until(run)
	if last := events[len(events)-1]; payload[domain.OutputPayload](t, last).FinalOutput != "both handled" {
		t.Fatalf("ended with %s", last.Type)
	}
	calls := modelCalls(model)
	body := string(calls[len(calls)-1].Body)
	if !strings.Contains(body, "not that list") || !strings.Contains(body, "rejected") {
		t.Fatalf("the rejection did not reach the model: %s", body)
	}
}

func TestADecisionWaitsForAnActiveRunAndANewMessageSupersedesThePause(t *testing.T) {
	t.Parallel()
	w := startPausedRun(t, "sup")
	h, tok, run, sse, sid := w.h, w.token, w.runID, w.stream, w.sessID
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)
	pending := h.approvals(tok, sid)[0]

	// While another run holds the session (as a background task's would),
	// a decision is refused and changes nothing.
	hub := workbenchparts.Of(h.app.wb).Runs.Hub()
	// run.interrupted is out; the paused run lets go of the session right
	// after (its last span is stored first).
	select {
	case <-hub.Freed(sid, run):
	case <-time.After(streamDeadline):
		t.Fatal("the paused run never let go of its session")
	}
	if err := hub.Claim(sid, "other-run", me.ID); err != nil {
		t.Fatal(err)
	}
	h.call("POST", "/api/v1/approvals/"+pending.ID+"/approve", tok, nil).wantErr(t, 409, "conflict")
	hub.Release(sid, "other-run")
	if len(h.approvals(tok, sid)) != 1 {
		t.Fatal("a refused decision was recorded")
	}

	// A new message supersedes the pause (the new run pauses in turn).
	run2 := h.startRun(tok, sid, map[string]any{"input": "never mind, something else"})
	sse2 := h.openSSE(tok, run2, 0)
	ended := sse.all(t)
	if last := lastEvent(ended); last.Type != domain.EventCancelled || payload[domain.CancelledPayload](t, last.Event).Reason != "superseded" {
		t.Fatalf("the paused run ended with %s %s", last.Type, last.Event.Payload)
	}
	h.call("POST", "/api/v1/approvals/"+pending.ID+"/approve", tok, nil).wantErr(t, 404, "not_found")
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
	if r.Status != "cancelled" {
		t.Fatalf("superseded run = %+v", r)
	}
	var notRun bool
	for _, m := range h.messages(tok, sid, "") {
		if m.Display != nil && m.Display.Kind == "not_run" && domain.ParseItem(m.Item).Kind() == "function_call_output" {
			notRun = true
		}
	}
	if !notRun {
		t.Fatal("the waiting call was not recorded as not run")
	}

	// A cancel stops a pause too.
	untilType(t, sse2, domain.EventInterrupted)
	p2 := h.approvals(tok, sid)[0]
	h.call("POST", "/api/v1/runs/"+run2+"/cancel", tok, nil).want(t, 200)
	if last := lastEvent(sse2.all(t)); payload[domain.CancelledPayload](t, last.Event).Reason != "stopped" {
		t.Fatalf("cancelled pause ended with %s", last.Event.Payload)
	}
	h.call("POST", "/api/v1/approvals/"+p2.ID+"/reject", tok, nil).wantErr(t, 404, "not_found")
	// Someone else cannot see or decide it.
	run3 := h.startRun(tok, sid, map[string]any{"input": "note it"})
	untilType(t, h.openSSE(tok, run3, 0), domain.EventInterrupted)
	p3 := h.approvals(tok, sid)[0]
	other := h.member("other")
	h.call("POST", "/api/v1/approvals/"+p3.ID+"/approve", other, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/sessions/"+sid+"/approvals", other, nil).wantErr(t, 404, "not_found")
	if len(h.approvals(other, "")) != 0 {
		t.Fatal("another user lists the approval")
	}
	h.call("POST", "/api/v1/approvals/"+p3.ID+"/approve", tok, map[string]any{"scope": "forever"}).wantErr(t, 400, "validation")
}

func TestPreferWaitAnswersInterrupted(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("gated", gatedScript())
	h := startServer(t, testConfig(t))
	tok := h.member("pwi")
	s := h.gatedSession(tok, url)
	var v httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "note it"}, "Prefer", "wait=30").want(t, 200).decode(t, &v)
	if v.Status != "interrupted" || v.FinalOutput != nil {
		t.Fatalf("wait on a pause = %+v", v)
	}
}

// lockedClock is a clock a test moves.
type lockedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *lockedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *lockedClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestUnansweredApprovalsExpireWithAVisibleNote(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("gated", gatedScript())
	cfg := testConfig(t)
	clock := &lockedClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	cfg.Clock = clock
	h := startServer(t, cfg)
	tok := h.member("ttl")
	h.call("PUT", "/api/v1/settings/approval_ttl_minutes", h.admin, map[string]string{"value": "5"}).want(t, 200)
	s := h.gatedSession(tok, url)
	run := h.startRun(tok, s.ID, map[string]any{"input": "note it"})
	sse := h.openSSE(tok, run, 0)
	untilType(t, sse, domain.EventInterrupted)
	pending := h.approvals(tok, s.ID)[0]

	clock.Add(4 * time.Minute)
	if n, err := workbenchparts.Of(h.app.wb).Runs.ReapApprovals(context.Background()); err != nil || n != 0 {
		t.Fatalf("reaped %d early: %v", n, err)
	}
	clock.Add(2 * time.Minute)
	if n, err := workbenchparts.Of(h.app.wb).Runs.ReapApprovals(context.Background()); err != nil || n != 1 {
		t.Fatalf("reaped %d: %v", n, err)
	}
	if last := lastEvent(sse.all(t)); payload[domain.CancelledPayload](t, last.Event).Reason != "expired" {
		t.Fatalf("expired pause ended with %s", last.Event.Payload)
	}
	msgs := h.messages(tok, s.ID, "")
	note := msgs[len(msgs)-1]
	if note.Kind != domain.KindAnnotation || !strings.Contains(note.Text, "todo_write") || note.Display.Kind != "run_cancelled" ||
		note.Display.Title != "Approval expired" || note.Display.Extra["code"] != "expired" {
		t.Fatalf("no visible note: %+v", note)
	}
	h.call("POST", "/api/v1/approvals/"+pending.ID+"/approve", tok, nil).wantErr(t, 404, "not_found")
	// 0 turns expiry off.
	h.call("PUT", "/api/v1/settings/approval_ttl_minutes", h.admin, map[string]string{"value": "0"}).want(t, 200)
	run2 := h.startRun(tok, s.ID, map[string]any{"input": "note it"})
	untilType(t, h.openSSE(tok, run2, 0), domain.EventInterrupted)
	clock.Add(100 * time.Hour)
	if n, _ := workbenchparts.Of(h.app.wb).Runs.ReapApprovals(context.Background()); n != 0 || len(h.approvals(tok, s.ID)) != 1 {
		t.Fatal("approvals expired with the TTL off")
	}
}

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// slowToolScript streams its first answer slowly, then calls todo_write and
// answers again: a run that is still working when a test acts on it.
func slowToolScript() scripted.Script {
	return scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("thinking it over ", 40), ChunkSize: 4, DelayMS: 20,
			ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}},
		{Text: "done"},
	}}}}
}

// watchedRun is a member's run followed over SSE up to an event of
// interest: seen holds the events read so far.
type watchedRun struct {
	h      *harness
	model  *scripted.Server
	token  string
	sessID string
	runID  string
	stream *sseStream
	seen   []sseEvent
}

// watchRun starts a server, the scripted model serving script as
// modelName, a member called name with a session from newSession, and a
// run of theirs ("note it"), then reads its events until one of type until.
func watchRun(t *testing.T, name, modelName string, script scripted.Script,
	newSession func(h *harness, tok, url string) string, until string) watchedRun {
	t.Helper()
	model, url := startScripted(t)
	model.SetScript(modelName, script)
	h := startServer(t, testConfig(t))
	tok := h.member(name)
	sid := newSession(h, tok, url)
	run := h.startRun(tok, sid, map[string]any{"input": "note it"})
	stream := h.openSSE(tok, run, 0)
	seen := untilType(t, stream, until)
	return watchedRun{h: h, model: model, token: tok, sessID: sid, runID: run, stream: stream, seen: seen}
}

// startBusyRun is a member's run caught mid-answer: the model is streaming
// the first step of slowToolScript.
func startBusyRun(t *testing.T, name string) watchedRun {
	t.Helper()
	return watchRun(t, name, "busy", slowToolScript(), func(h *harness, tok, url string) string {
		agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "busy", "model": "busy"})
		return h.createSession(tok, map[string]any{"agent_config_id": agent}).ID
	}, domain.EventStep)
}

// startPausedRun is a member's run paused for approval of its todo_write.
func startPausedRun(t *testing.T, name string) watchedRun {
	t.Helper()
	return watchRun(t, name, "gated", gatedScript(), func(h *harness, tok, url string) string {
		return h.gatedSession(tok, url).ID
	}, domain.EventInterrupted)
}

// finalOf reads a stream to its end and returns its last event. A stream
// still open after a generous bound fails the test rather than hang it.
func finalOf(t *testing.T, s *sseStream) sseEvent {
	t.Helper()
	timer := time.AfterFunc(streamDeadline, s.close)
	defer timer.Stop()
	evs := s.all(t)
	if len(evs) == 0 || !evs[len(evs)-1].Event.Final() {
		t.Fatalf("the stream ended without a final event (%d events)", len(evs))
	}
	return evs[len(evs)-1]
}

// Deleting a session stops its live run before answering: the run's stream
// has already ended cancelled when the 204 arrives, so no model call or tool
// follows it.
func TestDeletingASessionStopsItsLiveRunFirst(t *testing.T) {
	t.Parallel()
	b := startBusyRun(t, "del")
	h, model, tok, stream, run, sid := b.h, b.model, b.token, b.stream, b.runID, b.sessID

	h.call("DELETE", "/api/v1/sessions/"+sid, tok, nil).want(t, 204)
	calls, all := len(modelCalls(model)), len(model.Requests()) // the run's, and its title's
	last := finalOf(t, stream)
	if last.Type != domain.EventCancelled || payload[domain.CancelledPayload](t, last.Event).Reason != "session_deleted" {
		t.Fatalf("the run's stream ended with %s %s, want run.cancelled (session_deleted)", last.Type, last.Event.Payload)
	}
	if got := len(modelCalls(model)); got != 1 || got != calls || len(model.Requests()) != all {
		t.Fatalf("model calls: %d at the 204, %d once the stream ended; want the one in flight only", calls, got)
	}
	h.call("GET", "/api/v1/runs/"+run, tok, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/sessions/"+sid, tok, nil).wantErr(t, 404, "not_found")
	if strings.Contains(h.logs.String(), domain.CodePersistError) {
		t.Fatalf("the stopped run failed to persist:\n%s", h.logs.String())
	}
}

// A session paused for approval is deleted with its pause: the run's stream
// says it was cancelled and the approval is gone.
func TestDeletingASessionEndsItsPausedRun(t *testing.T) {
	t.Parallel()
	b := startPausedRun(t, "delp")
	h, model, tok, stream, sid := b.h, b.model, b.token, b.stream, b.sessID
	pending := h.approvals(tok, "")
	if len(pending) != 1 {
		t.Fatalf("approvals = %+v", pending)
	}

	h.call("DELETE", "/api/v1/sessions/"+sid, tok, nil).want(t, 204)
	if last := finalOf(t, stream); last.Type != domain.EventCancelled {
		t.Fatalf("the paused run's stream ended with %s, want run.cancelled", last.Type)
	}
	if left := h.approvals(tok, ""); len(left) != 0 {
		t.Fatalf("approvals after the delete = %+v", left)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).wantErr(t, 404, "not_found")
	if got := len(modelCalls(model)); got != 1 {
		t.Fatalf("model calls = %d, want the one before the pause", got)
	}
}

// Moving the active branch under a live run is refused like a second run.
func TestBranchDuringALiveRunIsAConflict(t *testing.T) {
	t.Parallel()
	b := startBusyRun(t, "br")
	h, tok, stream, sid := b.h, b.token, b.stream, b.sessID
	first := h.messages(tok, sid, "")[0]

	h.call("POST", "/api/v1/sessions/"+sid+"/branch", tok, map[string]any{"entry_id": first.ID}).wantErr(t, 409, "conflict")
	if last := finalOf(t, stream); last.Type != domain.EventOutput {
		t.Fatalf("the run ended with %s", last.Type)
	}
	h.call("POST", "/api/v1/sessions/"+sid+"/branch", tok, map[string]any{"entry_id": first.ID}).want(t, 200)
}

// Deleting an account stops its live runs before the row goes: no run of
// a deleted user goes on calling the model.
func TestDeletingAUserStopsTheirRunsFirst(t *testing.T) {
	t.Parallel()
	b := startBusyRun(t, "leaver")
	h, model := b.h, b.model
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", b.token, nil).want(t, 200).decode(t, &me)
	id := me.ID

	h.call("DELETE", "/api/v1/auth/users/"+id, h.admin, nil).want(t, 204)
	if live := workbenchparts.Of(h.app.wb).Runs.Hub().LiveRuns(id); len(live) != 0 {
		t.Fatalf("runs still live after the account was deleted: %v", live)
	}
	if got := len(modelCalls(model)); got != 1 {
		t.Fatalf("model calls = %d, want the one in flight", got)
	}
	if strings.Contains(h.logs.String(), domain.CodePersistError) {
		t.Fatalf("the stopped run failed to persist:\n%s", h.logs.String())
	}
}

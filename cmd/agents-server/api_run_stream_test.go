package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// talker is a server whose member ann has a conversation with an agent
// answering in n one-character deltas; answer is what it says.
func talker(t *testing.T, n int) (h *harness, ann, session, answer string) {
	model, url := startScripted(t)
	answer = strings.Repeat("abcdefghij", n/10)
	model.SetScript("long", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: answer, ChunkSize: 1}}}}})
	h = startServer(t, testConfig(t))
	ann = h.member("ann")
	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "talker", "model": "long"})
	return h, ann, h.createSession(ann, map[string]any{"agent_config_id": agent}).ID, answer
}

// streamedText joins a stream's text deltas, checking each event starts
// where the last one ended (a merged replay covers first_seq…seq) and that
// no gap came.
func streamedText(t *testing.T, events []sseEvent) string {
	t.Helper()
	var b strings.Builder
	next := int64(1)
	for _, ev := range events {
		if ev.Type == domain.EventGap {
			t.Fatalf("a gap: %s", ev.Event.Payload)
		}
		var d domain.DeltaPayload
		json.Unmarshal(ev.Event.Payload, &d)
		first := ev.ID
		if d.FirstSeq > 0 {
			first = d.FirstSeq
		}
		if first != next {
			t.Fatalf("%s covers %d…%d, want it to start at %d", ev.Type, first, ev.ID, next)
		}
		next = ev.ID + 1
		if ev.Type == domain.EventStep {
			b.WriteString(d.Delta)
		}
	}
	return b.String()
}

// A watcher that subscribes after a 1,500-delta run streamed past the
// replay ring still gets it whole from the first event, without a gap.
func TestALateSubscriberGetsTheWholeRun(t *testing.T) {
	t.Parallel()
	h, ann, s, answer := talker(t, 1500)
	v := h.chat(ann, s, "talk")
	if v.Status != "completed" {
		t.Fatalf("run = %+v", v)
	}
	events := h.openSSE(ann, v.RunID, 0).all(t)
	if events[0].Type != domain.EventRunStarted || events[len(events)-1].Type != domain.EventOutput {
		t.Fatalf("from %s to %s", events[0].Type, events[len(events)-1].Type)
	}
	if got := streamedText(t, events); got != answer {
		t.Fatalf("the late subscriber got %d of %d characters", len(got), len(answer))
	}
}

// One request starts the run and streams it: the run's id first, every
// event to the ending; a bad start is the usual error envelope.
func TestStartAndStreamInOneRequest(t *testing.T) {
	t.Parallel()
	h, ann, s, answer := talker(t, 1000)
	req, _ := http.NewRequest("POST", h.base+"/api/v1/sessions/"+s+"/runs", bytes.NewReader([]byte(`{"input":"talk"}`)))
	req.Header.Set("Authorization", "Bearer "+ann)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h.checkExchange(req, nil, resp.StatusCode)
	if resp.StatusCode != 201 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("start and stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := (&sseStream{resp: resp, rd: bufio.NewReader(resp.Body), events: h.eventSchema()}).all(t)
	var started domain.RunStartedPayload
	json.Unmarshal(events[0].Event.Payload, &started)
	if events[0].Type != domain.EventRunStarted || resp.Header.Get("Content-Location") != "/api/v1/runs/"+started.RunID {
		t.Fatalf("first %s %s; Content-Location %q", events[0].Type, events[0].Event.Payload, resp.Header.Get("Content-Location"))
	}
	if got := streamedText(t, events); got != answer || events[len(events)-1].Type != domain.EventOutput {
		t.Fatalf("streamed %d of %d characters, ending with %s", len(got), len(answer), events[len(events)-1].Type)
	}
	// Refused before anything starts: the envelope, not a stream.
	req, _ = http.NewRequest("POST", h.base+"/api/v1/sessions/nope/runs", bytes.NewReader([]byte(`{"input":"talk"}`)))
	req.Header.Set("Authorization", "Bearer "+ann)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	h.send(req, []byte(`{"input":"talk"}`)).wantErr(t, 404, "not_found")
}

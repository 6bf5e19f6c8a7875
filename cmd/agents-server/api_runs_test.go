package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

func oneStep(st scripted.Step) scripted.Script {
	return scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{st}}}}
}

// TestStreamedTurnEqualsItsReload runs the same conversation through the
// three wire protocols, each over the vendor's official SDK against the
// scripted model, and checks what streamed equals what was stored.
func TestStreamedTurnEqualsItsReload(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("greeter", oneStep(scripted.Step{Reasoning: "The user greets me.", Text: "Hello there, friend! How can I help?",
		ChunkSize: 3, Usage: &scripted.Usage{InputTokens: 42, OutputTokens: 11}}))
	h := startServer(t, testConfig(t))
	tok := h.member("sam")
	for name, prov := range protocols(url) {
		t.Run(name, func(t *testing.T) {
			agent := h.agentOn(tok, prov, map[string]any{"name": "greeter-" + name, "model": "greeter"})
			s := h.createSession(tok, map[string]any{"agent_config_id": agent})
			run := h.startRun(tok, s.ID, map[string]any{"input": "hi!"})
			events := h.openSSE(tok, run, 0).all(t)

			if events[0].Type != domain.EventRunStarted || payload[domain.RunStartedPayload](t, events[0].Event).Input != "hi!" {
				t.Fatalf("first event = %+v", events[0])
			}
			var text, reasoning, message, final string
			for i, ev := range events {
				if ev.ID != int64(i+1) || ev.Event.Seq != ev.ID || ev.Type != ev.Event.Type {
					t.Fatalf("event %d: id %d seq %d type %s/%s", i, ev.ID, ev.Event.Seq, ev.Type, ev.Event.Type)
				}
				switch ev.Type {
				case domain.EventStep:
					text += payload[domain.DeltaPayload](t, ev.Event).Delta
				case domain.EventReasoning:
					reasoning += payload[domain.DeltaPayload](t, ev.Event).Delta
				case domain.EventMessage:
					message = payload[domain.TextPayload](t, ev.Event).Text
				case domain.EventOutput:
					final = payload[domain.OutputPayload](t, ev.Event).FinalOutput
				}
			}
			want := "Hello there, friend! How can I help?"
			if text != want || message != want || final != want {
				t.Fatalf("deltas %q, message %q, final %q", text, message, final)
			}
			if name != "openai-chat" && reasoning != "The user greets me." {
				t.Fatalf("reasoning = %q", reasoning)
			}
			if last := events[len(events)-1]; last.Type != domain.EventOutput {
				t.Fatalf("stream ended with %s", last.Type)
			}
			// The reload: the user's message and the assistant's, the same text.
			var msgs []httpapi.EntryView
			h.call("GET", "/api/v1/sessions/"+s.ID+"/messages", tok, nil).want(t, 200).decode(t, &msgs)
			var texts []string
			for _, m := range msgs {
				it := domain.ParseItem(m.Item)
				if it.Type == "message" {
					texts = append(texts, it.Role+":"+it.Text())
				}
				if m.RunID != run {
					t.Fatalf("entry of another run: %+v", m)
				}
			}
			if strings.Join(texts, "|") != "user:hi!|assistant:"+want {
				t.Fatalf("reloaded %v", texts)
			}
			var ctxv httpapi.ContextView
			h.call("GET", "/api/v1/sessions/"+s.ID+"/context", tok, nil).want(t, 200).decode(t, &ctxv)
			if ctxv.InputTokens != 42 {
				t.Fatalf("context after the run = %+v", ctxv)
			}
			var r httpapi.RunView
			h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
			if r.Status != "completed" || r.LastSeq != int64(len(events)) || r.AgentConfigID != agent {
				t.Fatalf("run = %+v (%d events)", r, len(events))
			}
		})
	}
}

func TestToolCallsAndHandoffsRoundTrip(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("lead", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "unknown", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "no_such_tool", Arguments: `{"x":1}`}}},
			{Text: "recovered"},
		}},
		{Steps: []scripted.Step{{Text: "Let me ask the reviewer.", ToolCalls: []scripted.ToolCall{{Name: "transfer_to_code_reviewer", Arguments: `{}`}}}}},
	}})
	// The reviewer answers the first call after the lead's turn: step 1.
	model.SetScript("reviewer", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "unused"}, {Text: "LGTM, ship it."}}}}})
	h := startServer(t, testConfig(t))
	tok := h.member("lee")
	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	reviewer := h.createAgent(tok, map[string]any{"name": "Code Reviewer", "model": "reviewer", "provider_id": prov.ID})
	lead := h.createAgent(tok, map[string]any{"name": "lead", "model": "lead", "provider_id": prov.ID, "handoffs": []string{reviewer.ID}})
	s := h.createSession(tok, map[string]any{"agent_config_id": lead.ID})

	events := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "review my diff"}), 0).all(t)
	var kinds []string
	for _, ev := range events {
		switch ev.Type {
		case domain.EventToolCall:
			p := payload[domain.ToolCallPayload](t, ev.Event)
			kinds = append(kinds, "call:"+p.ToolName)
		case domain.EventToolResult:
			kinds = append(kinds, "result")
		case domain.EventHandoff:
			p := payload[domain.HandoffPayload](t, ev.Event)
			if p.From != "lead" || p.To != "Code Reviewer" || p.FromID != lead.ID || p.ToID != reviewer.ID {
				t.Fatalf("handoff = %+v", p)
			}
			kinds = append(kinds, "handoff")
		case domain.EventAgentStart:
			kinds = append(kinds, "agent:"+payload[domain.AgentStartPayload](t, ev.Event).AgentName)
		case domain.EventOutput:
			kinds = append(kinds, "output:"+payload[domain.OutputPayload](t, ev.Event).FinalOutput)
		}
	}
	want := "agent:lead call:transfer_to_code_reviewer result handoff agent:Code Reviewer output:LGTM, ship it."
	if strings.Join(kinds, " ") != want {
		t.Fatalf("events: %s", strings.Join(kinds, " "))
	}

	// An unknown tool is fed back to the model, which recovers.
	events = h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "call an unknown tool"}), 0).all(t)
	var result domain.ToolResultPayload
	for _, ev := range events {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if !result.IsError || !strings.Contains(result.Output, "no_such_tool") || events[len(events)-1].Type != domain.EventOutput {
		t.Fatalf("unknown tool: %+v, last %s", result, events[len(events)-1].Type)
	}
	// The second call saw the call and its output in its input.
	reqs := modelCalls(model)
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "function_call_output") || !strings.Contains(last, "no_such_tool") {
		t.Fatalf("the follow-up call's input lacks the tool round trip: %s", last)
	}
}

func TestPreferWait(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("quick", oneStep(scripted.Step{Text: "done quickly"}))
	model.SetScript("slow", oneStep(scripted.Step{Text: "this takes a while to say", ChunkSize: 1, DelayMS: 200}))
	h := startServer(t, testConfig(t))
	tok := h.member("pw")
	prov := h.createProvider(tok, protocols(url)["openai-chat"])
	quick := h.createAgent(tok, map[string]any{"name": "quick", "model": "quick", "provider_id": prov.ID})
	slow := h.createAgent(tok, map[string]any{"name": "slow", "model": "slow", "provider_id": prov.ID})

	s := h.createSession(tok, map[string]any{"agent_config_id": quick.ID})
	r := h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "go"}, "Prefer", "wait=30").want(t, 200)
	var v httpapi.RunStateView
	r.decode(t, &v)
	if v.Status != "completed" || v.FinalOutput == nil || *v.FinalOutput != "done quickly" || r.Header.Get("Preference-Applied") != "wait=30" {
		t.Fatalf("wait answered %s %v", r.Body, r.Header)
	}
	// A regenerate (on another agent) that fails at once writes nothing
	// but the note of the switch and the note of its failure; the
	// session's run listing has it, with how it ended.
	refuse := scripted.Step{Error: &scripted.Failure{Status: 400, Message: "bad request"}}
	model.SetScript("broken", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{refuse, refuse}}}})
	broken := h.createAgent(tok, map[string]any{"name": "broken", "model": "broken", "provider_id": prov.ID})
	var failed httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"agent_config_id": broken.ID}, "Prefer", "wait=30").want(t, 200).decode(t, &failed)
	var runs []httpapi.RunSummaryView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/runs", tok, nil).want(t, 200).decode(t, &runs)
	if len(runs) != 2 || runs[0].RunID != v.RunID || runs[0].Status != "completed" || runs[0].Question != "go" || runs[0].EndedAt == nil ||
		runs[1].RunID != failed.RunID || runs[1].Status != "error" || runs[1].ErrorCode != domain.CodeModelError ||
		runs[1].Entries != 2 || runs[1].AgentConfigID != broken.ID {
		t.Fatalf("session runs = %+v", runs)
	}
	// Its last entry is the note of how it failed, there after a reload.
	msgs := h.messages(tok, s.ID, "")
	if last := msgs[len(msgs)-1]; last.RunID != failed.RunID || last.Display == nil || last.Display.Kind != "run_error" ||
		!last.Display.IsError || last.Display.Extra["code"] != domain.CodeModelError || !strings.Contains(last.Text, "bad request") {
		t.Fatalf("the failure's note: %+v", last)
	}

	s2 := h.createSession(tok, map[string]any{"agent_config_id": slow.ID})
	r = h.call("POST", "/api/v1/sessions/"+s2.ID+"/runs", tok, map[string]any{"input": "go"}, "Prefer", "respond-async, wait=1").want(t, 202)
	v = httpapi.RunStateView{}
	r.decode(t, &v)
	if v.Status != "running" || v.FinalOutput != nil {
		t.Fatalf("timed-out wait = %s", r.Body)
	}
	// A second run on a busy session is refused, over REST and WebSocket.
	h.call("POST", "/api/v1/sessions/"+s2.ID+"/runs", tok, map[string]any{"input": "again"}).wantErr(t, 409, "conflict")
	ws := h.dialWS(tok)
	ws.send("run.create", map[string]any{"session_id": s2.ID, "input": "again"})
	for {
		ev := ws.read()
		if ev.Type == domain.EventError {
			p := payload[domain.ErrorPayload](t, ev)
			if p.Code != domain.CodeSessionBusy || p.SessionID != s2.ID {
				t.Fatalf("ws refusal = %+v", p)
			}
			break
		}
	}
	for _, bad := range []string{"wait=soon", "wait=-1"} {
		h.call("POST", "/api/v1/sessions/"+s2.ID+"/runs", tok, map[string]any{"input": "x"}, "Prefer", bad).wantErr(t, 400, "validation")
	}
	h.openSSE(tok, v.RunID, 0).all(t) // let it finish

	// A wait past the cap is honoured up to ten minutes, not refused.
	for _, long := range []string{"wait=601", "wait=99999999999999999999999"} {
		s3 := h.createSession(tok, map[string]any{"agent_config_id": quick.ID})
		r = h.call("POST", "/api/v1/sessions/"+s3.ID+"/runs", tok, map[string]any{"input": "go"}, "Prefer", long).want(t, 200)
		if got := r.Header.Get("Preference-Applied"); got != "wait=600" {
			t.Fatalf("%s: Preference-Applied = %q, want wait=600", long, got)
		}
	}
}

func TestSSEResumeDeliversEveryEventExactlyOnce(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("talker", oneStep(scripted.Step{Text: strings.Repeat("word ", 60), ChunkSize: 5, DelayMS: 5}))
	h := startServer(t, testConfig(t))
	tok := h.member("rs")
	agent := h.agentOn(tok, protocols(url)["anthropic"], map[string]any{"name": "talker", "model": "talker"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	run := h.startRun(tok, s.ID, map[string]any{"input": "talk"})

	first := h.openSSE(tok, run, 0)
	var got []int64
	for len(got) < 10 {
		ev, ok := first.next(t)
		if !ok {
			t.Fatal("stream ended early")
		}
		got = append(got, ev.ID)
	}
	first.close() // the client drops mid-run; the run goes on
	for _, ev := range h.openSSE(tok, run, got[len(got)-1]).all(t) {
		got = append(got, ev.ID)
	}
	for i, id := range got {
		if id != int64(i+1) {
			t.Fatalf("event %d has id %d: lost or repeated (%v)", i, id, got)
		}
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
	if r.Status != "completed" || r.LastSeq != int64(len(got)) {
		t.Fatalf("run = %+v, %d events", r, len(got))
	}
	// Someone else cannot read it.
	h.call("GET", "/api/v1/runs/"+run, h.member("nosy"), nil).wantErr(t, 404, "not_found")
}

func TestSlowSubscriberGetsAGapAndTheRunFinishes(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("flood", oneStep(scripted.Step{Text: strings.Repeat("x", 30000), ChunkSize: 1}))
	cfg := testConfig(t)
	cfg.Hub.SubscriberBuf = 16
	h := startServer(t, cfg)
	tok := h.member("slow")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "flood", "model": "flood"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	run := h.startRun(tok, s.ID, map[string]any{"input": "go"})
	sse := h.openSSE(tok, run, 0)
	// Read nothing until the run is over: the socket and the queue fill up.
	// Thirty thousand deltas take a while under -race on a loaded machine:
	// the bound only keeps a stuck run from hanging the suite.
	waitForUpTo(t, 3*time.Minute, func() bool {
		var r httpapi.RunView
		h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
		return r.Status == "completed"
	})
	events := sse.all(t)
	var gap *domain.GapPayload
	for _, ev := range events {
		if ev.Type == domain.EventGap {
			g := payload[domain.GapPayload](t, ev.Event)
			gap = &g
		}
	}
	if gap == nil || gap.Dropped == 0 || gap.Next <= gap.LastGood {
		t.Fatalf("no usable run.gap among %d events", len(events))
	}
	if last := events[len(events)-1]; last.Type != domain.EventOutput {
		t.Fatalf("stream ended with %s", last.Type)
	}
}

func TestCancelAbortAndGraceful(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("slow", oneStep(scripted.Step{Text: strings.Repeat("slow ", 100), ChunkSize: 5, DelayMS: 50}))
	model.SetScript("tooly", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "working on it", ChunkSize: 2, DelayMS: 100, ToolCalls: []scripted.ToolCall{{Name: "nope", Arguments: "{}"}}},
		{Text: "should never be asked"},
	}}}})
	h := startServer(t, testConfig(t))
	tok := h.member("can")
	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	slow := h.createAgent(tok, map[string]any{"name": "slow", "model": "slow", "provider_id": prov.ID})
	tooly := h.createAgent(tok, map[string]any{"name": "tooly", "model": "tooly", "provider_id": prov.ID})

	s := h.createSession(tok, map[string]any{"agent_config_id": slow.ID})
	run := h.startRun(tok, s.ID, map[string]any{"input": "go"})
	sse := h.openSSE(tok, run, 0)
	for ev, _ := sse.next(t); ev.Type != domain.EventStep; ev, _ = sse.next(t) {
	}
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, nil).want(t, 200)
	events := sse.all(t)
	if last := events[len(events)-1]; last.Type != domain.EventCancelled {
		t.Fatalf("abort ended with %s", last.Type)
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
	if r.Status != "cancelled" {
		t.Fatalf("after abort: %+v", r)
	}
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, nil).wantErr(t, 409, "conflict")
	// The session is free again.
	s2 := h.createSession(tok, map[string]any{"agent_config_id": tooly.ID})
	run = h.startRun(tok, s2.ID, map[string]any{"input": "go"})
	sse = h.openSSE(tok, run, 0)
	for ev, _ := sse.next(t); ev.Type != domain.EventStep; ev, _ = sse.next(t) {
	}
	before := len(modelCalls(model))
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, map[string]any{"mode": "graceful"}).want(t, 200)
	var types []string
	for _, ev := range sse.all(t) {
		types = append(types, ev.Type)
	}
	joined := strings.Join(types, " ")
	if !strings.Contains(joined, "run.tool_result") || !strings.HasSuffix(joined, "run.cancelled") {
		t.Fatalf("graceful: %s", joined)
	}
	if len(modelCalls(model)) != before {
		t.Fatal("a graceful cancel let the next turn's model call happen")
	}
	// The finished turn was recorded.
	var msgs []httpapi.EntryView
	h.call("GET", "/api/v1/sessions/"+s2.ID+"/messages", tok, nil).want(t, 200).decode(t, &msgs)
	// user, assistant text, function call, its output, and the note saying
	// how the run ended, so a reload shows the cancellation too.
	if len(msgs) != 5 || msgs[4].Kind != domain.KindAnnotation || msgs[4].Display == nil || msgs[4].Display.Kind != "run_cancelled" ||
		msgs[4].Display.Extra["code"] != "stopped" || msgs[4].RunID != run {
		t.Fatalf("entries after a graceful cancel: %+v", msgs)
	}
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, map[string]any{"mode": "later"}).wantErr(t, 400, "validation")
}

func TestInjectSteerChangesTheNextModelInput(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("stepper", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "first turn", ChunkSize: 2, DelayMS: 60, ToolCalls: []scripted.ToolCall{{Name: "nope", Arguments: "{}"}}},
		{Text: "second turn"},
	}}}})
	h := startServer(t, testConfig(t))
	tok := h.member("inj")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "stepper", "model": "stepper"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	run := h.startRun(tok, s.ID, map[string]any{"input": "begin"})
	ws := h.dialWS(tok)
	ws.send("run.subscribe", map[string]any{"run_id": run, "from_seq": 0})
	for ev := ws.read(); ev.Type != domain.EventStep; ev = ws.read() {
	}
	ws.send("run.inject", map[string]any{"run_id": run, "queue": "steer", "input": "answer in French"})
	events := ws.until(run)
	var injected bool
	for _, ev := range events {
		if ev.Type == domain.EventInjected && payload[domain.InjectedPayload](t, ev).Input == "answer in French" {
			injected = true
		}
	}
	if !injected || events[len(events)-1].Type != domain.EventOutput {
		t.Fatalf("inject: injected=%v last=%s", injected, events[len(events)-1].Type)
	}
	reqs := modelCalls(model)
	if !strings.Contains(string(reqs[len(reqs)-1].Body), "answer in French") || strings.Contains(string(reqs[0].Body), "answer in French") {
		t.Fatal("the steer did not reach (only) the next model call")
	}
	// A dead run refuses input.
	ws.send("run.inject", map[string]any{"run_id": "no-such-run", "queue": "steer", "input": "x"})
	for ev := ws.read(); ; ev = ws.read() {
		if ev.Type == domain.EventError {
			if p := payload[domain.ErrorPayload](t, ev); p.Code != domain.CodeRunNotFound {
				t.Fatalf("dead run inject = %+v", p)
			}
			break
		}
	}
	h.call("POST", "/api/v1/runs/"+run+"/inject", tok, map[string]any{"queue": "steer", "input": "late"}).wantErr(t, 409, "conflict")
}

func TestWebSocketBusAttachesEveryConnection(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("hi", oneStep(scripted.Step{Text: "hello both"}))
	h := startServer(t, testConfig(t))
	tok := h.member("two")
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "hi", "model": "hi"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	a, b := h.dialWS(tok), h.dialWS(tok)
	stranger := h.dialWS(h.member("stranger"))
	a.send("run.create", map[string]any{"session_id": s.ID, "input": "hello"})
	started := a.read()
	if started.Type != domain.EventRunStarted {
		t.Fatalf("creator got %s first", started.Type)
	}
	run := payload[domain.RunStartedPayload](t, started).RunID
	for _, c := range []*wsClient{a, b} {
		events := c.until(run)
		if last := events[len(events)-1]; last.Type != domain.EventOutput || payload[domain.OutputPayload](t, last).FinalOutput != "hello both" {
			t.Fatalf("a connection missed the run: %+v", events)
		}
	}
	// Another user's connection hears nothing of it.
	stranger.ws.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var ev domain.Event
	if err := stranger.ws.ReadJSON(&ev); err == nil {
		t.Fatalf("a stranger received %+v", ev)
	}
	// Unknown messages get an error envelope and the socket stays open.
	a.send("run.dance", map[string]any{})
	if ev := a.read(); ev.Type != "error" {
		t.Fatalf("unknown message answered %s", ev.Type)
	}
	a.send("run.subscribe", map[string]any{"run_id": run, "from_seq": 0})
	if ev := a.read(); ev.Type != domain.EventRunStarted {
		t.Fatalf("resubscribe from 0 started with %s", ev.Type)
	}
}

func TestWebSocketRefusesBadAuthAndHugeFrames(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	url := "ws" + strings.TrimPrefix(h.base, "http") + "/ws"
	for _, first := range []string{`{"type":"auth","token":"wrong"}`, `{"type":"run.create"}`} {
		ws, _, err := websocketDial(url)
		if err != nil {
			t.Fatal(err)
		}
		ws.WriteMessage(1, []byte(first))
		var ev domain.Event
		ws.ReadJSON(&ev)
		if ev.Type != "error" {
			t.Fatalf("%s answered %+v", first, ev)
		}
		if _, _, err := ws.ReadMessage(); !isClose(err, 1008) {
			t.Fatalf("after %s: %v", first, err)
		}
		ws.Close()
	}
	c := h.dialWS(h.admin)
	c.ws.WriteMessage(1, []byte(`{"type":"run.inject","payload":{"input":"`+strings.Repeat("x", 1<<20)+`"}}`))
	if _, _, err := c.ws.ReadMessage(); !isClose(err, 1009) {
		t.Fatalf("an oversize frame: %v", err)
	}
	// The token never rides the query string.
	resp, err := http.Get(h.base + "/ws?token=" + h.admin)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		t.Fatal("a plain GET upgraded")
	}
}

func TestARestartEndsRunsLeftRunningWithAVisibleNote(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	h := startServer(t, cfg)
	tok := h.member("crash")
	s := h.createSession(tok, map[string]any{})
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)
	// A run the process was executing when it died.
	orphan := domain.Run{ID: "01a00000-0000-7000-8000-00000000dead", SessionID: s.ID, OwnerID: me.ID, Status: domain.RunRunning,
		Input: "hello", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := workbenchparts.Of(h.app.wb).DB.CreateRun(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	h.stop()
	h2 := startServer(t, cfg)
	run, err := workbenchparts.Of(h2.app.wb).DB.FindRun(context.Background(), orphan.ID)
	if err != nil || run.Status != domain.RunError || run.ErrorCode != domain.CodeServerRestarted || run.EndedAt == nil {
		t.Fatalf("after restart: %+v %v", run, err)
	}
	var msgs []httpapi.EntryView
	h2.call("GET", "/api/v1/sessions/"+s.ID+"/messages", tok, nil).want(t, 200).decode(t, &msgs)
	if len(msgs) != 1 || msgs[0].Kind != domain.KindAnnotation || msgs[0].RunID != orphan.ID || !strings.Contains(msgs[0].Text, "restarted") {
		t.Fatalf("note = %+v", msgs)
	}
}

func TestAStopKeepsWhatWasSaid(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	full := "one two three four five six seven eight nine ten eleven twelve"
	model.SetScript("talker", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "again", Steps: []scripted.Step{{Text: "picking up"}}},
		{Steps: []scripted.Step{{Text: full, ChunkSize: 4, DelayMS: 150}}},
	}})
	tok := h.member("stopper")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "talker", "model": "talker"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	run := h.startRun(tok, s.ID, map[string]any{"input": "talk"})
	stream := h.openSSE(tok, run, 0)
	var streamed string
	for len(streamed) < 12 {
		ev, ok := stream.next(t)
		if !ok {
			t.Fatal("the stream ended before any text")
		}
		if ev.Type == domain.EventStep {
			streamed += payload[domain.DeltaPayload](t, ev.Event).Delta
		}
	}
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, nil).want(t, 200)
	untilType(t, stream, domain.EventCancelled)
	// The partial answer is kept, marked, before the note of the stop.
	var kept *httpapi.EntryView
	msgs := h.messages(tok, s.ID, "")
	for i := range msgs {
		if it := domain.ParseItem(msgs[i].Item); it.Kind() == domain.ItemMessage && it.Role == "assistant" {
			kept = &msgs[i]
		}
	}
	if kept == nil || kept.Display == nil || kept.Display.Kind != "stopped" {
		t.Fatalf("messages after the stop = %+v", msgs)
	}
	text := domain.ParseItem(kept.Item).Text()
	if !strings.HasPrefix(full, text) || len(text) < len(streamed) || text == full {
		t.Fatalf("kept %q after streaming %q", text, streamed)
	}
	if last := msgs[len(msgs)-1]; last.Display == nil || last.Display.Kind != "run_cancelled" {
		t.Fatalf("the stop's note = %+v", last)
	}
	// The next turn reads it as what the assistant had said.
	h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "again"}), 0).all(t)
	var next string
	for _, r := range model.Requests() {
		if b := string(r.Body); strings.Contains(b, "again") && !strings.Contains(b, models.TitlePrefix) {
			next = b
		}
	}
	if !strings.Contains(next, text) {
		t.Fatalf("the next call did not carry the partial answer: %.400s", next)
	}
}

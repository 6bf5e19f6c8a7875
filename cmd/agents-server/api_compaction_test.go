package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
)

// The summarizer's answer, and the conversation's: a checklist call on
// the first question (a tool-call pair to keep whole), plain answers after.
func compactionScript() scripted.Script {
	todo := scripted.ToolCall{Name: "todo_write", Arguments: `{"todos":[{"content":"look","status":"pending"}]}`}
	return scripted.Script{Exchanges: []scripted.Exchange{
		{When: models.CompactPrefix, Steps: []scripted.Step{{Text: "SUMMARY: the person asked three questions."}}},
		{When: "first", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{todo}}, {Text: "answer one"}}},
		{When: "second", Steps: []scripted.Step{{Text: "answer two"}}},
		{When: "third", Steps: []scripted.Step{{Text: "answer three"}}},
		{When: "OVERFLOW-ONCE", Steps: []scripted.Step{{Text: "recovered", FailTimes: 1, Error: &scripted.Failure{Overflow: true}}}},
		{When: "OVERFLOW-ALWAYS", Steps: []scripted.Step{{Error: &scripted.Failure{Overflow: true}}}},
		{Steps: []scripted.Step{{Text: "ok", ChunkSize: 1, DelayMS: 20}}},
	}}
}

// compactingSession is a session on an agent of the given compaction
// settings over protocol, its model scripted by compactionScript.
func compactingSession(t *testing.T, h *harness, tok, protocol, model string, compaction map[string]any) (*scripted.Server, string) {
	t.Helper()
	m, url := startScripted(t)
	m.SetScript(model, compactionScript())
	provider := maps.Clone(protocols(url)[protocol])
	provider["name"] = "provider-" + model
	agent := h.agentOn(tok, provider, map[string]any{"name": model, "model": model, "compaction": compaction})
	return m, h.createSession(tok, map[string]any{"agent_config_id": agent, "name": model}).ID
}

// ask runs input to its end and returns its events.
func (h *harness) ask(tok, sessionID, input string) []sseEvent {
	h.t.Helper()
	run := h.startRun(tok, sessionID, map[string]any{"input": input})
	return h.openSSE(tok, run, 0).all(h.t)
}

func TestCompactionFoldsThePrefixPastTheThresholdKeepingPairsWhole(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("long")
	model, sid := compactingSession(t, h, tok, "openai-responses", "compacting",
		map[string]any{"compaction_enabled": true, "compaction_threshold_tokens": 1, "compaction_window": 5})
	h.ask(tok, sid, "first question")
	h.ask(tok, sid, "second question")
	events := h.ask(tok, sid, "third question")

	var phases []string
	for _, ev := range events {
		if ev.Type == domain.EventCompaction {
			phases = append(phases, payload[domain.CompactionPayload](t, ev.Event).Phase)
		}
	}
	if strings.Join(phases, " ") != "started finished" {
		t.Fatalf("compaction events = %v", phases)
	}
	// The window (5) would open on the checklist's output: it grows back
	// to its call, so only the first question is folded.
	msgs := h.messages(tok, sid, "")
	var folded, checkpoints []httpapi.EntryView
	for _, m := range msgs {
		if m.Compacted {
			folded = append(folded, m)
		}
		if m.Kind == domain.KindCompaction {
			checkpoints = append(checkpoints, m)
		}
	}
	if len(folded) != 1 || domain.ParseItem(folded[0].Item).Text() != "first question" {
		t.Fatalf("folded = %+v", folded)
	}
	if len(checkpoints) != 1 || checkpoints[0].Checkpoint == nil || checkpoints[0].Checkpoint.Summary != "SUMMARY: the person asked three questions." ||
		len(checkpoints[0].Checkpoint.ExcludedIDs) != 1 || checkpoints[0].Checkpoint.ExcludedIDs[0] != folded[0].ID ||
		checkpoints[0].Display == nil || !strings.Contains(checkpoints[0].Display.Summary, "→") {
		t.Fatalf("checkpoint = %+v", checkpoints)
	}
	// The third answer's model call read [summary, kept…].
	reqs := model.Requests()
	last := string(reqs[len(reqs)-1].Body)
	summaryAt, callAt, thirdAt := strings.Index(last, "SUMMARY: the person"), strings.Index(last, `"todo_write"`), strings.Index(last, "third question")
	if summaryAt < 0 || callAt < summaryAt || thirdAt < callAt || strings.Contains(last, "first question") {
		t.Fatalf("the call after the fold sent %.600s", last)
	}
	// The summarizer read the folded prefix as one transcript.
	var summarized bool
	for _, r := range reqs {
		if strings.Contains(string(r.Body), models.CompactPrefix) && strings.Contains(string(r.Body), "user: first question") {
			summarized = true
		}
	}
	if !summarized {
		t.Fatal("no summary call read the folded question")
	}
}

func TestNoCompactionUnderTheThreshold(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("short")
	_, sid := compactingSession(t, h, tok, "openai-responses", "roomy",
		map[string]any{"compaction_enabled": true, "compaction_threshold_tokens": 1_000_000, "compaction_window": 1})
	for _, q := range []string{"first question", "second question", "third question"} {
		for _, ev := range h.ask(tok, sid, q) {
			if ev.Type == domain.EventCompaction {
				t.Fatalf("a pass under the threshold: %+v", ev)
			}
		}
	}
	for _, m := range h.messages(tok, sid, "") {
		if m.Compacted || m.Kind == domain.KindCompaction {
			t.Fatalf("folded under the threshold: %+v", m)
		}
	}
}

func TestCompactNowForcesAPassAndRefusesWhatItCannot(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("forcer")
	_, sid := compactingSession(t, h, tok, "openai-responses", "forced",
		map[string]any{"compaction_enabled": true, "compaction_threshold_tokens": 1_000_000, "compaction_window": 2})
	var out httpapi.CompactView
	h.call("POST", "/api/v1/sessions/"+sid+"/compact", tok, nil).want(t, 200).decode(t, &out)
	if out.Compacted {
		t.Fatal("an empty session compacted")
	}
	h.ask(tok, sid, "second question, with all the detail it needs: "+strings.Repeat("context ", 100))
	h.ask(tok, sid, "third question")
	var before, after httpapi.ContextView
	h.call("GET", "/api/v1/sessions/"+sid+"/context", tok, nil).want(t, 200).decode(t, &before)
	h.call("POST", "/api/v1/sessions/"+sid+"/compact", tok, nil).want(t, 200).decode(t, &out)
	if !out.Compacted {
		t.Fatal("a forced pass over four entries with a window of two folded nothing")
	}
	// The long question left the window the model sees; its usage stays.
	h.call("GET", "/api/v1/sessions/"+sid+"/context", tok, nil).want(t, 200).decode(t, &after)
	if after.ConversationTokens >= before.ConversationTokens-100 || after.CompactionTokens >= before.CompactionTokens ||
		after.SessionInputTokens != before.SessionInputTokens {
		t.Fatalf("context before %+v, after %+v", before, after)
	}
	// The summary call is the person's, recorded as a compaction, and
	// counted in the conversation's usage.
	var folds []usageRow
	for _, c := range h.usageCalls(tok, "/usage/me/export") {
		if c["kind"] == "compaction" && c["session_id"] == sid {
			folds = append(folds, c)
		}
	}
	if len(folds) != 1 || after.Usage.Calls != before.Usage.Calls+1 {
		t.Errorf("compaction calls %v; the conversation's calls %d then %d", folds, before.Usage.Calls, after.Usage.Calls)
	}
	// A summary alone is not summarized again.
	h.call("POST", "/api/v1/sessions/"+sid+"/compact", tok, nil).want(t, 200).decode(t, &out)
	if out.Compacted {
		t.Fatal("a summary of a summary")
	}
	// 409 while a run holds the session.
	run := h.startRun(tok, sid, map[string]any{"input": "take your time"})
	h.call("POST", "/api/v1/sessions/"+sid+"/compact", tok, nil).wantErr(t, 409, "conflict")
	h.openSSE(tok, run, 0).all(t)
	// 400 when the agent has compaction off, 404 for someone else's session.
	_, off := compactingSession(t, h, tok, "openai-responses", "off", map[string]any{})
	h.call("POST", "/api/v1/sessions/"+off+"/compact", tok, nil).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/sessions/"+sid+"/compact", h.member("nosy"), nil).wantErr(t, 404, "not_found")
	// 400 when the agent has no usable provider.
	noProvider := h.createAgent(tok, map[string]any{"name": "unreachable", "model": "m", "compaction": map[string]any{"compaction_enabled": true}})
	s := h.createSession(tok, map[string]any{"agent_config_id": noProvider.ID})
	h.call("POST", "/api/v1/sessions/"+s.ID+"/compact", tok, nil).wantErr(t, 400, "validation")
}

func TestAnOverflowCompactsAndRetriesTheTurnOnEveryProtocol(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("overflow")
	for _, protocol := range []string{"openai-responses", "openai-chat", "anthropic"} {
		t.Run(protocol, func(t *testing.T) {
			_, sid := compactingSession(t, h, tok, protocol, "over-"+protocol,
				map[string]any{"compaction_enabled": true, "compaction_threshold_tokens": 1_000_000, "compaction_window": 1})
			h.ask(tok, sid, "second question")
			events := h.ask(tok, sid, "OVERFLOW-ONCE")
			last := events[len(events)-1]
			if last.Type != domain.EventOutput || payload[domain.OutputPayload](t, last.Event).FinalOutput != "recovered" {
				t.Fatalf("ended with %s %s", last.Type, last.Event.Payload)
			}
			var sawFold bool
			for _, m := range h.messages(tok, sid, "") {
				sawFold = sawFold || m.Kind == domain.KindCompaction
			}
			if !sawFold {
				t.Fatal("the overflow did not fold the history")
			}
			// An overflow that folding cannot cure ends the run, saying so.
			events = h.ask(tok, sid, "OVERFLOW-ALWAYS")
			last = events[len(events)-1]
			p := payload[domain.ErrorPayload](t, last.Event)
			if last.Type != domain.EventError || p.Code != domain.CodeContextOverflow || !strings.Contains(p.Message, "context window") {
				t.Fatalf("ended with %s %+v", last.Type, p)
			}
		})
	}
}

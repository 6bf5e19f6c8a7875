package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// Caps on what one account or conversation can pile up: background tasks
// waiting behind the live-task cap, MCP servers an account owns.

// A run spawning past what a conversation may hold working and waiting is
// told so in the tool's output (and can adapt); nothing of the refused
// task is kept.
func TestSpawnsPastTheQueuedTaskCapAreRefusedWithTheReason(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "piler", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("PILE-1", "one"), spawnCall("PILE-2", "two"), spawnCall("PILE-3", "three")}},
			{Text: "Spawned what I could."}},
		scripted.Exchange{When: "PILE-", Steps: []scripted.Step{slowText(60)}},
	), map[string]any{})
	h, tok := s.h, s.token
	h.call("PUT", "/api/v1/settings/max_tasks_per_session", h.admin, map[string]any{"value": "1"}).want(t, 200)
	h.call("PUT", "/api/v1/settings/max_queued_tasks_per_session", h.admin, map[string]any{"value": "1"}).want(t, 200)
	h.startRun(tok, s.session, map[string]any{"input": "pile up"})
	s.idle()

	// The three calls run side by side: whichever came third was refused
	// (the counts it names depend on whether the first had launched yet).
	var outputs, refused []string
	for _, e := range h.messages(tok, s.session, "") {
		if domain.ParseItem(e.Item).Kind() != "function_call_output" {
			continue
		}
		outputs = append(outputs, string(e.Item))
		if strings.Contains(string(e.Item), "max_queued_tasks_per_session") {
			refused = append(refused, string(e.Item))
		}
	}
	if len(outputs) != 3 || len(refused) != 1 || !strings.Contains(refused[0], "waiting for a slot") {
		t.Fatalf("spawn outputs = %q", outputs)
	}
	tasks := s.tasks()
	queued := 0
	for _, tk := range tasks {
		if tk.Queued {
			queued++
		}
	}
	if len(tasks) != 2 || queued != 1 {
		t.Fatalf("tasks = %+v", tasks)
	}
	for _, tk := range tasks {
		h.call("POST", "/api/v1/tasks/"+tk.TaskID+"/stop", tok, nil).want(t, 200)
	}
}

// An account owns at most max_mcp_servers_per_user MCP servers, admins
// too; creations racing each other cannot pass it together.
func TestMCPServersPerUserAreCapped(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	h.call("PUT", "/api/v1/settings/max_mcp_servers_per_user", h.admin, map[string]any{"value": "3"}).want(t, 200)
	body := func(name string) map[string]any {
		return map[string]any{"name": name, "enabled": false, "config": map[string]any{"endpoint": "https://" + name + ".example/mcp"}}
	}
	for _, who := range []struct{ name, token string }{{"member", h.member("collector")}, {"admin", h.admin}} {
		var first httpapi.MCPServerView
		for i := range 3 {
			r := h.call("POST", "/api/v1/mcp-servers", who.token, body(fmt.Sprintf("%s-%d", who.name, i))).want(t, 201)
			if i == 0 {
				r.decode(t, &first)
			}
		}
		e := h.call("POST", "/api/v1/mcp-servers", who.token, body(who.name+"-3")).wantErr(t, 409, "conflict")
		if !strings.Contains(e.Message, "max_mcp_servers_per_user") {
			t.Fatalf("%s refused as %q", who.name, e.Message)
		}
		// Deleting one makes room for another.
		h.call("DELETE", "/api/v1/mcp-servers/"+first.ID, who.token, nil).want(t, 204)
		h.call("POST", "/api/v1/mcp-servers", who.token, body(who.name+"-4")).want(t, 201)
	}

	// Twelve at once from a fresh account: three go in (the count and the
	// insert share one write transaction).
	racer := h.member("racer")
	codes := make(chan int, 12)
	for i := range cap(codes) {
		raw, _ := json.Marshal(body(fmt.Sprintf("race-%d", i)))
		req, _ := http.NewRequest("POST", h.base+"/api/v1/mcp-servers", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+racer)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	got := map[int]int{}
	for range cap(codes) {
		got[<-codes]++
	}
	if got[201] != 3 || got[409] != cap(codes)-3 {
		t.Fatalf("racing creations answered %v, want 3×201 and the rest 409", got)
	}
	var list []httpapi.MCPServerView
	h.call("GET", "/api/v1/mcp-servers", racer, nil).want(t, 200).decode(t, &list)
	mine := 0
	for _, v := range list {
		if strings.HasPrefix(v.Name, "race-") {
			mine++
		}
	}
	if mine != 3 {
		t.Fatalf("the racer owns %d servers", mine)
	}
}

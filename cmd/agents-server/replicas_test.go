package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
)

// The replica suite: real binaries on one Postgres database, as a team
// runs them behind a load balancer. A run started on one replica streams
// from another, commands sent to another act on it, a cron trigger fires
// once, and when a replica is SIGKILLed another ends its runs, pays the
// wake-ups its tasks owed and serves everything.

// replicaFailover is the failover bound the replicas run with.
const replicaFailover = 4 * time.Second

// startReplica runs a binary on the database at url.
func startReplica(t *testing.T, url string) *process {
	t.Helper()
	dir := t.TempDir()
	dirDatabases.Store(dir, url)
	return startBinary(t, dir, "AGENTS_FAILOVER_AFTER="+replicaFailover.String())
}

// eventsOf reads an SSE stream to its end (cut after a minute: a stream
// that never ends fails the test instead of hanging it).
func eventsOf(t *testing.T, s *sseStream) []domain.Event {
	t.Helper()
	cut := time.AfterFunc(time.Minute, s.close)
	defer cut.Stop()
	var out []domain.Event
	for _, ev := range s.all(t) {
		out = append(out, ev.Event)
	}
	return out
}

// replicaWS follows one run over a replica's WebSocket bus, from the start:
// the bus attaches every run of the connection's owner by itself (those
// live when it signs in, and those that start after), so the client only
// signs in.
func replicaWS(t *testing.T, p *process, runID string) chan []domain.Event {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(p.url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.WriteJSON(map[string]any{"type": "auth", "token": p.token})
	done := make(chan []domain.Event, 1)
	go func() {
		var out []domain.Event
		defer func() { done <- out }()
		for {
			ws.SetReadDeadline(time.Now().Add(60 * time.Second))
			_, frame, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var ev domain.Event
			json.Unmarshal(frame, &ev)
			var of struct {
				RunID string `json:"run_id"`
			}
			json.Unmarshal(ev.Payload, &of)
			if of.RunID != runID {
				continue // auth.ok, other runs
			}
			out = append(out, ev)
			if ev.Final() {
				return
			}
		}
	}()
	return done
}

// slowPoll polls cond every 100 ms (a replica's request budget is per
// address) until it holds, failing after a minute.
func slowPoll(t *testing.T, cond func() bool) {
	t.Helper() // a failure names the caller's line: which condition never held
	pollUntil(t, time.Minute, 100*time.Millisecond, cond)
}

// wholeOnce checks a stream holds every event of its run once, in order,
// from run.started to a final event.
func wholeOnce(t *testing.T, where string, evs []domain.Event) {
	t.Helper()
	if len(evs) < 3 || evs[0].Type != domain.EventRunStarted || !evs[len(evs)-1].Final() {
		t.Fatalf("%s: %d events, from %v to %v", where, len(evs), typeAt(evs, 0), typeAt(evs, len(evs)-1))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("%s: event %d has seq %d (%s): a gap, a repeat or a reorder", where, i, ev.Seq, ev.Type)
		}
	}
}

func typeAt(evs []domain.Event, i int) string {
	if i < 0 || i >= len(evs) {
		return "nothing"
	}
	return evs[i].Type
}

func TestReplicasServeOneTeam(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("slow", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("replicas stream ", 40), ChunkSize: 8, DelayMS: 15}}}}})
	model.SetScript("long", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{slowText(30)}}}})
	model.SetScript("quick", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "tick noted"}}}}})
	model.SetScript("gated", gatedScript())
	model.SetScript("boss", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("background job", "job")}}, {Text: "Spawned it."}},
		scripted.Exchange{When: "background job", Steps: []scripted.Step{slowText(30)}}))

	a := startReplica(t, url)
	b := startReplica(t, url)
	must := func(t *testing.T, p *process, method, path string, body any, want int, headers ...string) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body, headers...)
		if code != want {
			t.Fatalf("%s %s on %s: %d %s\nits log:\n%s", method, path, p.url, code, raw, p.stderr)
		}
		return out
	}
	prov := must(t, a, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)["id"]
	agent := func(name string, extra map[string]any) string {
		body := map[string]any{"name": name, "model": name, "provider_id": prov}
		for k, v := range extra {
			body[k] = v
		}
		return must(t, a, "POST", "/api/v1/agents", body, 201)["id"].(string)
	}
	slow, long, quick, boss := agent("slow", nil), agent("long", nil), agent("quick", nil), agent("boss", nil)
	careful := agent("gated", map[string]any{"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	session := func(t *testing.T, p *process, agentID string) string {
		return must(t, p, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agentID, "name": "s"}, 201)["id"].(string)
	}
	start := func(t *testing.T, p *process, sid, input string) string {
		return must(t, p, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": input}, 201)["run_id"].(string)
	}

	// A cron trigger both replicas tick: it must fire once a minute, not
	// twice. Checked at the end, a minute on.
	tickSession := session(t, b, quick)
	trigger := must(t, b, "POST", "/api/v1/triggers", map[string]any{"kind": "cron", "schedule": "* * * * *", "target": "agent",
		"agent_config_id": quick, "session_id": tickSession, "brief": "tick"}, 201)["id"].(string)
	triggerSet := time.Now()

	t.Run("a run started on A streams from B over SSE and the WebSocket, every event once", func(t *testing.T) {
		sid := session(t, a, slow)
		runID := start(t, a, sid, "stream please")
		fromB := b.openSSE(t, runID, 0)
		overWS := replicaWS(t, b, runID)
		fromA := a.openSSE(t, runID, 0)
		onB, onA := eventsOf(t, fromB), eventsOf(t, fromA)
		wholeOnce(t, "SSE on B", onB)
		wholeOnce(t, "SSE on A", onA)
		wholeOnce(t, "WebSocket on B", <-overWS)
		if len(onA) != len(onB) || onB[len(onB)-1].Type != domain.EventOutput {
			t.Fatalf("A sent %d events, B %d ending %s", len(onA), len(onB), onB[len(onB)-1].Type)
		}
		// Resuming on B from the middle gets the rest, in order, to the
		// end (the ended run's deltas merged, as on one replica).
		rest := eventsOf(t, b.openSSE(t, runID, 10))
		if len(rest) == 0 || rest[0].Seq <= 10 || !rest[len(rest)-1].Final() || rest[len(rest)-1].Seq != onA[len(onA)-1].Seq {
			t.Fatalf("a resume from 10 on B got %d events from %v to %v", len(rest), rest[0].Seq, typeAt(rest, len(rest)-1))
		}
		for i := 1; i < len(rest); i++ {
			if rest[i].Seq <= rest[i-1].Seq {
				t.Fatalf("a resume from 10 on B went back from %d to %d", rest[i-1].Seq, rest[i].Seq)
			}
		}
	})

	t.Run("cancel and inject sent to B act on A's run", func(t *testing.T) {
		sid := session(t, a, slow)
		runID := start(t, a, sid, "stream please")
		fromB := b.openSSE(t, runID, 0)
		for steps := 0; steps < 5; {
			ev, ok := fromB.next(t)
			if !ok {
				t.Fatal("the stream ended early")
			}
			if ev.Type == domain.EventStep {
				steps++
			}
		}
		must(t, b, "POST", "/api/v1/runs/"+runID+"/inject", map[string]any{"queue": "next_turn", "input": "one more thing"}, 200)
		must(t, b, "POST", "/api/v1/runs/"+runID+"/cancel", map[string]any{}, 200)
		rest := eventsOf(t, fromB)
		if last := rest[len(rest)-1]; last.Type != domain.EventCancelled {
			t.Fatalf("B's stream ended with %s, want run.cancelled", last.Type)
		}
		if run := must(t, a, "GET", "/api/v1/runs/"+runID, nil, 200); run["status"] != "cancelled" {
			t.Fatalf("on A the run is %v", run["status"])
		}
		// The run is over everywhere: B refuses a command for it as A would.
		if code, _, raw := b.call(t, "POST", "/api/v1/runs/"+runID+"/cancel", map[string]any{}); code != 409 && code != 404 {
			t.Fatalf("cancel of an ended run via B: %d %s", code, raw)
		}
	})

	t.Run("approve sent to B resumes the run A paused", func(t *testing.T) {
		sid := session(t, a, careful)
		run := must(t, a, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "note it"}, 200, "Prefer", "wait=30")
		if run["status"] != "interrupted" {
			t.Fatalf("the run did not pause: %v", run)
		}
		runID := run["run_id"].(string)
		_, _, raw := b.call(t, "GET", "/api/v1/sessions/"+sid+"/approvals", nil)
		var pending []httpapi.ApprovalView
		json.Unmarshal(raw, &pending)
		if len(pending) != 1 || pending[0].RunID != runID {
			t.Fatalf("B lists %s", raw)
		}
		fromA := a.openSSE(t, runID, 0)
		if d := must(t, b, "POST", "/api/v1/approvals/"+pending[0].ID+"/approve", nil, 200); d["run_id"] != runID {
			t.Fatalf("approve on B answered %v", d)
		}
		evs := eventsOf(t, fromA)
		wholeOnce(t, "SSE on A across the pause", evs)
		var out domain.OutputPayload
		json.Unmarshal(evs[len(evs)-1].Payload, &out)
		if evs[len(evs)-1].Type != domain.EventOutput || !strings.Contains(out.FinalOutput, "all done") {
			t.Fatalf("the resumed run ended with %s %s", evs[len(evs)-1].Type, evs[len(evs)-1].Payload)
		}
	})

	t.Run("a trigger fires once across replicas", func(t *testing.T) {
		// The first minute boundary after the trigger was made, and a
		// few seconds for its run.
		next := triggerSet.Truncate(time.Minute).Add(time.Minute)
		time.Sleep(time.Until(next.Add(8 * time.Second)))
		tr := must(t, a, "GET", "/api/v1/triggers/"+trigger, nil, 200)
		if tr["last_fired_at"] == nil {
			t.Fatalf("the trigger never fired: %v", tr)
		}
		must(t, a, "DELETE", "/api/v1/triggers/"+trigger, nil, 204)
		_, _, raw := a.call(t, "GET", "/api/v1/sessions/"+tickSession+"/runs", nil)
		var runs []map[string]any
		json.Unmarshal(raw, &runs)
		if len(runs) != 1 {
			t.Fatalf("one tick started %d runs: %s", len(runs), raw)
		}
	})

	t.Run("deleting a conversation on B stops A's run on it first", func(t *testing.T) {
		sid := session(t, a, long)
		runID := start(t, a, sid, "stream please")
		fromA := a.openSSE(t, runID, 0)
		if ev, ok := fromA.next(t); !ok || ev.Type != domain.EventRunStarted {
			t.Fatalf("A's stream began with %v", ev.Type)
		}
		must(t, b, "DELETE", "/api/v1/sessions/"+sid, nil, 204)
		rest := eventsOf(t, fromA)
		if len(rest) == 0 || rest[len(rest)-1].Type != domain.EventCancelled ||
			!strings.Contains(string(rest[len(rest)-1].Payload), "session_deleted") {
			t.Fatalf("A's stream ended with %v", typeAt(rest, len(rest)-1))
		}
	})

	t.Run("a token revoked on B stops working on A at once, and its streams there close", func(t *testing.T) {
		created := must(t, a, "POST", "/api/v1/auth/tokens", map[string]any{"name": "laptop"}, 201)
		pat := created["token"].(string)
		viaPAT := &process{url: a.url, token: pat}
		must(t, viaPAT, "GET", "/api/v1/auth/me", nil, 200) // A has it cached now
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(a.url, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		ws.WriteJSON(map[string]any{"type": "auth", "token": pat})
		if _, frame, err := ws.ReadMessage(); err != nil || !strings.Contains(string(frame), "auth.ok") {
			t.Fatalf("A's socket answered %s, %v", frame, err)
		}
		must(t, b, "DELETE", "/api/v1/auth/tokens/"+created["id"].(string), nil, 204)
		ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, _, err := ws.ReadMessage()
			if err == nil {
				continue
			}
			if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 1008 || ce.Text != "token revoked" {
				t.Fatalf("A's socket ended with %v, want 1008 token revoked", err)
			}
			break
		}
		must(t, viaPAT, "GET", "/api/v1/auth/me", nil, 401)
	})

	t.Run("SIGKILL of A: B ends its runs as server_restarted, pays the wake-up and serves everything", func(t *testing.T) {
		c := startReplica(t, url) // a third replica, to show the failover is one replica's
		sid := session(t, a, long)
		runID := start(t, a, sid, "stream please")
		parent := session(t, a, boss)
		start(t, a, parent, "spawn a job")
		var task domain.TaskInfo
		slowPoll(t, func() bool {
			_, _, raw := b.call(t, "GET", "/api/v1/sessions/"+parent+"/tasks", nil)
			var tasks []domain.TaskInfo
			json.Unmarshal(raw, &tasks)
			if len(tasks) == 1 && tasks[0].Status == domain.TaskWorking && !tasks[0].Queued {
				task = tasks[0]
				return true
			}
			return false
		})
		fromB := b.openSSE(t, runID, 0)
		if ev, ok := fromB.next(t); !ok || ev.Type != domain.EventRunStarted {
			t.Fatalf("B's stream began with %v", ev.Type)
		}
		a.cmd.Process.Signal(syscall.SIGKILL)
		a.wait(t)
		killed := time.Now()

		rest := eventsOf(t, fromB)
		ended := time.Since(killed)
		if len(rest) == 0 {
			t.Fatalf("B's stream ended without a word after the kill\nB's log:\n%s\nC's log:\n%s", b.stderr, c.stderr)
		}
		last := rest[len(rest)-1]
		var e domain.ErrorPayload
		json.Unmarshal(last.Payload, &e)
		if last.Type != domain.EventError || e.Code != domain.CodeServerRestarted {
			t.Fatalf("B's stream ended with %s %s\nB's log:\n%s\nC's log:\n%s", last.Type, last.Payload, b.stderr, c.stderr)
		}
		t.Logf("the failover ended A's run %s after the kill (bound %s)", ended.Round(time.Millisecond), replicaFailover)
		if ended > replicaFailover+5*time.Second {
			t.Fatalf("the failover took %s, past its bound of %s", ended, replicaFailover)
		}
		for _, p := range []*process{b, c} {
			if run := must(t, p, "GET", "/api/v1/runs/"+runID, nil, 200); run["status"] != "error" {
				t.Fatalf("the run after the failover: %v", run)
			}
		}
		// The task A was running failed, and its parent was woken: the
		// wake-up's answer is in the parent conversation.
		slowPoll(t, func() bool {
			got := must(t, b, "GET", "/api/v1/tasks/"+task.TaskID, nil, 200)
			return got["status"] == string(domain.TaskFailed)
		})
		slowPoll(t, func() bool {
			_, _, raw := c.call(t, "GET", "/api/v1/sessions/"+parent+"/messages", nil)
			return strings.Contains(string(raw), "Noted the background results.")
		})
		// The survivors serve everything: a new run streams on either.
		sid2 := session(t, c, slow)
		run2 := start(t, b, sid2, "stream please")
		wholeOnce(t, "a run after the failover, from C", eventsOf(t, c.openSSE(t, run2, 0)))
		var names []string
		_, _, raw := b.call(t, "GET", "/api/v1/agents", nil)
		var agents []map[string]any
		json.Unmarshal(raw, &agents)
		for _, ag := range agents {
			names = append(names, fmt.Sprint(ag["name"]))
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"boss", "gated", "long", "quick", "slow"}) {
			t.Fatalf("agents after the failover: %v", names)
		}
	})
}

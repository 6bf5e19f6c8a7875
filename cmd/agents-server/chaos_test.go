package main

import (
	"archive/tar"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/triggers"
)

// The crash suite: the real binary against the scripted model, driven with
// streaming runs, tool calls, approvals, background tasks, workflows and
// webhook deliveries, SIGKILLed at a random moment each round; after every
// restart a checker looks for what a crash must never do. CHAOS_ROUNDS
// (default 2) and CHAOS_SEED (default: the time) choose the run; the seed
// is printed, so a failing round replays: CHAOS_SEED=… go tool task chaos.

// chaos is one suite's state across rounds.
type chaos struct {
	t        *testing.T
	rng      *rand.Rand
	dir      string
	p        *process
	seen     map[string]map[string]bool // session → entry ids read before a kill
	sessions []string
	agents   map[string]string
	workflow string
	trigger  struct{ id, secret, session string }
	project  string   // with a sandbox: the project shell runs work in ("" without)
	shells   []string // the conversations that ran commands there
	acked    int      // webhook deliveries answered 2xx
	kills    int
	faults   []string
}

// fault records a violation (the suite fails at the end with all of them).
func (c *chaos) fault(round int, format string, args ...any) {
	c.faults = append(c.faults, fmt.Sprintf("round %d: ", round)+fmt.Sprintf(format, args...))
}

func TestChaos(t *testing.T) { runChaos(t, false) }

// TestChaosWithSandbox adds commands run in a Docker sandbox, approved one
// by one, to every round: after the kills each command ran at most once
// for its call, and exactly once for a call whose output was recorded.
func TestChaosWithSandbox(t *testing.T) {
	needDocker(t)
	runChaos(t, true)
}

func runChaos(t *testing.T, sandbox bool) {
	t.Parallel()
	rounds := envInt("CHAOS_ROUNDS", 2)
	seed := uint64(envInt("CHAOS_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("chaos: %d rounds, CHAOS_SEED=%d", rounds, seed)
	model, modelURL := startScripted(t)
	model.SetScript("chaos", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "[task-notification]", Steps: []scripted.Step{{Text: "Noted the background results."}}},
		{When: "spawn", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("background job", "job")}}, {Text: "Spawned it."}}},
		{When: "shell", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "exec_command", Arguments: `{"cmd":"echo $NONCE >> /workspace/calls.log; sleep 0.2"}`}}},
			{ToolCalls: []scripted.ToolCall{{Name: "exec_command", Arguments: `{"cmd":"echo $NONCE >> /workspace/calls.log; sleep 0.2"}`}}},
			{Text: "Ran them."}}},
		{When: "gated", Steps: []scripted.Step{{Text: "Noting.", ToolCalls: []scripted.ToolCall{{Name: "todo_write",
			Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}}, {Text: "all done"}}},
		{Steps: []scripted.Step{{Text: strings.Repeat("chaos streams on ", 30), ChunkSize: 6, DelayMS: 15}}},
	}})
	c := &chaos{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), dir: t.TempDir(), seen: map[string]map[string]bool{},
		agents: map[string]string{}}
	c.p = startBinary(t, c.dir)
	c.setUp(modelURL, sandbox)
	for round := 1; round <= rounds; round++ {
		c.round(round)
	}
	t.Logf("chaos: rounds=%d kills=%d violations=%d seed=%d", rounds, c.kills, len(c.faults), seed)
	for _, f := range c.faults {
		t.Error(f)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// must makes a call that has to succeed.
func (c *chaos) must(method, path string, body any, want int, headers ...string) map[string]any {
	c.t.Helper()
	code, out, raw := c.p.call(c.t, method, path, body, headers...)
	if code != want {
		c.t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	return out
}

func (c *chaos) setUp(modelURL string, sandbox bool) {
	prov := c.must("POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)
	c.agents["main"] = c.must("POST", "/api/v1/agents", map[string]any{"name": "main", "model": "chaos", "provider_id": prov["id"],
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}}, 201)["id"].(string)
	c.workflow = c.must("POST", "/api/v1/workflows", map[string]any{"name": "wf", "description": "d",
		"steps": []map[string]any{{"name": "one", "agent": c.agents["main"], "prompt": "step work"}}}, 201)["id"].(string)
	c.trigger.session = c.session()
	tr := c.must("POST", "/api/v1/triggers", map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": c.agents["main"],
		"session_id": c.trigger.session, "brief": "A delivery came."}, 201)
	c.trigger.id, c.trigger.secret = tr["id"].(string), tr["secret"].(string)
	if sandbox {
		c.agents["shell"] = c.must("POST", "/api/v1/agents", map[string]any{"name": "shell", "model": "chaos", "provider_id": prov["id"],
			"approval": map[string]any{"approve_tools": []string{"exec_command"}}}, 201)["id"].(string)
		box := c.must("POST", "/api/v1/sandboxes", map[string]any{"name": "box", "type": "docker",
			"config": map[string]any{"image": sandboxImage, "memory_mb": 256, "cpus": 1}}, 201)
		c.project = c.must("POST", "/api/v1/projects", map[string]any{"name": "chaos", "sandbox_id": box["id"]}, 201)["id"].(string)
		c.must("POST", "/api/v1/projects/"+c.project+"/sandbox/start", nil, 200)
	}
}

func (c *chaos) session() string {
	id := c.must("POST", "/api/v1/sessions", map[string]any{"agent_config_id": c.agents["main"], "name": "chaos"}, 201)["id"].(string)
	c.sessions = append(c.sessions, id)
	return id
}

// round drives work, kills the server at a random moment, restarts it and
// checks.
func (c *chaos) round(n int) {
	var streaming []string
	for i := 0; i < 3; i++ {
		out := c.must("POST", "/api/v1/sessions/"+c.session()+"/runs", map[string]any{"input": "stream please"}, 201)
		streaming = append(streaming, out["run_id"].(string))
	}
	c.must("POST", "/api/v1/sessions/"+c.session()+"/runs", map[string]any{"input": "gated work"}, 200, "Prefer", "wait=30")
	c.must("POST", "/api/v1/sessions/"+c.session()+"/runs", map[string]any{"input": "spawn a job"}, 201)
	c.must("POST", "/api/v1/workflows/"+c.workflow+"/runs", map[string]any{"session_id": c.session(), "input": "go"}, 201)
	c.deliver(n)
	if c.project != "" {
		s := c.must("POST", "/api/v1/sessions", map[string]any{"agent_config_id": c.agents["shell"], "name": "shell"}, 201)["id"].(string)
		c.sessions, c.shells = append(c.sessions, s), append(c.shells, s)
		c.must("POST", "/api/v1/sessions/"+s+"/runs", map[string]any{"input": "shell work", "project_id": c.project}, 201)
	}
	// Decide an approval left from an earlier round, racing the kill.
	go decideOne(c.p)

	after := time.Duration(c.rng.IntN(1500)) * time.Millisecond
	time.Sleep(after)
	c.snapshot()
	c.p.cmd.Process.Signal(syscall.SIGKILL)
	c.p.wait(c.t)
	c.kills++
	c.p = startBinary(c.t, c.dir)
	c.check(n, streaming, after)
}

// deliver sends one signed webhook delivery; a 2xx is owed exactly one
// fire.
func (c *chaos) deliver(n int) {
	body := fmt.Sprintf(`{"round":%d}`, n)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	code, _, raw := c.p.call(c.t, "POST", "/hooks/"+c.trigger.id, []byte(body),
		triggers.TimestampHeader, stamp, triggers.SignatureHeader, "sha256="+triggers.Sign(c.trigger.secret, stamp, []byte(body)))
	switch {
	case code >= 200 && code < 300:
		c.acked++
	case code == 409: // the trigger's conversation is busy: refused, nothing fired
	default:
		c.t.Fatalf("webhook: %d %s", code, raw)
	}
}

// decideOne approves one pending approval, if any (the server may die
// under it).
func decideOne(p *process) {
	send := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, p.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		return resp
	}
	resp := send("GET", "/api/v1/approvals")
	if resp == nil {
		return
	}
	var list []httpapi.ApprovalView
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) > 0 {
		if resp := send("POST", "/api/v1/approvals/"+list[0].ID+"/approve"); resp != nil {
			resp.Body.Close()
		}
	}
}

// snapshot reads every conversation: what it returns was committed, and
// must be there after the kill.
func (c *chaos) snapshot() {
	for _, s := range c.sessions {
		for _, e := range c.entries(s) {
			if c.seen[s] == nil {
				c.seen[s] = map[string]bool{}
			}
			c.seen[s][e.ID] = true
		}
	}
}

func (c *chaos) entries(session string) []httpapi.EntryView {
	var out []httpapi.EntryView
	c.get("/api/v1/sessions/"+session+"/messages", &out)
	return out
}

// get reads a document that must be there, waiting out the per-address
// read budget (the checker reads a lot, fast) rather than mistaking a 429
// for an empty answer.
func (c *chaos) get(path string, out any) {
	c.t.Helper()
	for {
		code, _, raw := c.p.call(c.t, "GET", path, nil)
		if code == http.StatusTooManyRequests {
			time.Sleep(time.Second)
			continue
		}
		if code != 200 {
			c.t.Fatalf("GET %s: %d %s", path, code, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("GET %s: %v", path, err)
		}
		return
	}
}

var notified = regexp.MustCompile(`task_id=(\S+) status=(\S+) attempt=(\d+)`)

// countWakes counts the task notifications an entry carries, by task and
// attempt.
func countWakes(wakes map[string]int, e httpapi.EntryView) {
	for _, m := range notified.FindAllStringSubmatch(string(e.Item), -1) {
		wakes[m[1]+" "+m[3]]++
	}
}

// check is what must hold after a restart.
func (c *chaos) check(n int, streaming []string, killedAfter time.Duration) {
	// The store is whole: SQLite's file checks out (a Postgres server
	// keeps its own data whole; what the rows say is checked below).
	if databaseFor(c.t, c.dir) == "" {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(c.dir, sqlstore.FileName)+"?mode=ro")
		if err != nil {
			c.t.Fatal(err)
		}
		var ok string
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			c.fault(n, "integrity_check: %q %v", ok, err)
		}
		db.Close()
	}
	// A stream cut by the kill resumes to its ending.
	for _, id := range streaming[:1] {
		got := c.p.openSSE(c.t, id, 1).all(c.t)
		if len(got) == 0 || !got[len(got)-1].Event.Final() {
			c.fault(n, "the resumed stream of %s did not end: %d events", id, len(got))
		}
	}
	// Settle: approvals decided, tasks final, wake-ups paid.
	deadline := time.Now().Add(60 * time.Second)
	for {
		busy := c.settleStep()
		if busy == "" {
			break
		}
		if time.Now().After(deadline) {
			c.fault(n, "work did not settle in 60 s: %s", busy)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// No entry lost or doubled; every run final; every wake-up once.
	wakes := map[string]int{}
	for _, s := range c.sessions {
		ids := map[string]bool{}
		for _, e := range c.entries(s) {
			if ids[e.ID] {
				c.fault(n, "entry %s twice in %s", e.ID, s)
			}
			ids[e.ID] = true
			countWakes(wakes, e)
		}
		for id := range c.seen[s] {
			if !ids[id] {
				c.fault(n, "entry %s of %s was read before the kill and is gone", id, s)
			}
		}
		var list []httpapi.RunSummaryView
		c.get("/api/v1/sessions/"+s+"/runs", &list)
		for _, r := range list {
			if r.Status == string(domain.RunRunning) {
				c.fault(n, "run %s still running after settling", r.RunID)
			}
		}
	}
	var page httpapi.TaskListView
	c.get("/api/v1/tasks?limit=200", &page)
	entries, reported := 0, 0
	for _, s := range c.seen {
		entries += len(s)
	}
	for _, task := range page.Tasks {
		if task.Status == domain.TaskCompleted || task.Status == domain.TaskFailed {
			reported++
			if got := wakes[task.TaskID+" "+strconv.Itoa(task.Attempt)]; got != 1 {
				c.fault(n, "task %s (%s, attempt %d) woke its parent %d times", task.TaskID, task.Status, task.Attempt, got)
			}
		}
	}
	// Every acknowledged delivery fired once.
	fired := 0
	for _, e := range c.entries(c.trigger.session) {
		if e.Display != nil && e.Display.Kind == "trigger_fired" {
			fired++
		}
	}
	if fired != c.acked {
		c.fault(n, "%d webhook deliveries acknowledged, %d fired", c.acked, fired)
	}
	if c.project != "" {
		c.checkCommands(n)
	}
	c.t.Logf("round %d: killed %v in; checked %d entries read before kills, %d final tasks' wake-ups, %d deliveries",
		n, killedAfter, entries, reported, c.acked)
}

// checkCommands reads the project's calls.log (each command appends its
// call's nonce) from an export: no call's command ran twice, and every
// call with a successful recorded output ran once.
func (c *chaos) checkCommands(n int) {
	req, _ := http.NewRequest("GET", c.p.url+"/api/v1/projects/"+c.project+"/export", nil)
	req.Header.Set("Authorization", "Bearer "+c.p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		c.t.Fatalf("export: %v %v", err, resp)
	}
	defer resp.Body.Close()
	ran := map[string]int{}
	tr := tar.NewReader(resp.Body)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if path.Base(h.Name) == "calls.log" {
			body, _ := io.ReadAll(tr)
			for _, l := range strings.Fields(string(body)) {
				ran[l]++
			}
		}
	}
	for nonce, times := range ran {
		if times > 1 {
			c.fault(n, "the command of call %s ran %d times", nonce, times)
		}
	}
	recorded := 0
	for _, s := range c.shells {
		nonces := map[string]string{} // call id → nonce
		for _, e := range c.entries(s) {
			it := domain.ParseItem(e.Item)
			switch it.Kind() {
			case domain.ItemFunctionCall:
				if m := nonceIn.FindStringSubmatch(it.Arguments); m != nil {
					nonces[it.CallID] = m[1]
				}
			case domain.ItemFunctionCallOutput:
				if nonce := nonces[it.CallID]; nonce != "" && (e.Display == nil || !e.Display.IsError) {
					recorded++
					if ran[nonce] != 1 {
						c.fault(n, "call %s recorded a successful output but its command ran %d times", it.CallID, ran[nonce])
					}
				}
			}
		}
	}
	c.t.Logf("round %d: %d commands ran, %d recorded as done", n, len(ran), recorded)
}

var nonceIn = regexp.MustCompile(`echo (\S+) >>`)

// recent are the conversations of the round and the trigger's.
func (c *chaos) recent() []string {
	return append([]string{c.trigger.session}, c.sessions[max(0, len(c.sessions)-7):]...)
}

// settleStep decides what waits for a person and reports what is still
// moving ("" when nothing is).
func (c *chaos) settleStep() string {
	var aps []httpapi.ApprovalView
	c.get("/api/v1/approvals", &aps)
	for _, a := range aps {
		if code, _, raw := c.p.call(c.t, "POST", "/api/v1/approvals/"+a.ID+"/approve", nil); code != 200 && code != 409 {
			return fmt.Sprintf("approving %s: %d %s", a.ID, code, raw)
		}
	}
	var page httpapi.TaskListView
	c.get("/api/v1/tasks?live=true&limit=200", &page)
	for _, task := range page.Tasks {
		if task.Status == domain.TaskWorking || task.Status == domain.TaskInputRequired {
			return "task " + task.TaskID + " " + string(task.Status)
		}
	}
	// Every final task's wake-up is paid: one owed at the restart is paid
	// by a run that may not have started yet.
	wakes := map[string]int{}
	for _, s := range c.sessions {
		for _, e := range c.entries(s) {
			countWakes(wakes, e)
		}
	}
	var all httpapi.TaskListView
	c.get("/api/v1/tasks?limit=200", &all)
	for _, task := range all.Tasks {
		if (task.Status == domain.TaskCompleted || task.Status == domain.TaskFailed) && wakes[task.TaskID+" "+strconv.Itoa(task.Attempt)] == 0 {
			return "task " + task.TaskID + "'s wake-up is not paid yet"
		}
	}
	// Earlier rounds' conversations settled then; a restart can only wake
	// one (a task of its that failed), which the task list shows first.
	for _, s := range c.recent() {
		var list []httpapi.RunSummaryView
		c.get("/api/v1/sessions/"+s+"/runs", &list)
		for _, r := range list {
			if r.Status == string(domain.RunRunning) || r.Status == string(domain.RunInterrupted) {
				return "run " + r.RunID + " " + r.Status
			}
		}
	}
	return ""
}

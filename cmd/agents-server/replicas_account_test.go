package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
)

// An account deleted on one replica stops its runs on every replica: a
// member's run executing on A ends cancelled (account_deleted) when an
// admin deletes the member on B, before the account's rows go, and both
// replicas' watchers see it end.
func TestReplicasDeletingAnAccountStopsItsRunsEverywhere(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("long", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{slowText(30)}}}})
	a := startReplica(t, url)
	b := startReplica(t, url)
	must := func(t *testing.T, p *process, method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s on %s: %d %s\nits log:\n%s", method, path, p.url, code, raw, p.stderr)
		}
		return out
	}

	// The member's provider is the scripted model, on a loopback address.
	must(t, a, "PUT", "/api/v1/settings/outbound_allow_private", map[string]string{"value": "true"}, 200)
	user := must(t, b, "POST", "/api/v1/auth/users", map[string]string{"username": "leaver", "password": "password-leaver"}, 201)["id"].(string)
	_, _, raw := a.call(t, "POST", "/api/v1/auth/login", map[string]string{"username": "leaver", "password": "password-leaver"})
	var login httpapi.LoginResponse
	if err := json.Unmarshal(raw, &login); err != nil || login.Token == "" {
		t.Fatalf("the member's sign-in answered %s", raw)
	}
	onA, onB := &process{url: a.url, token: login.Token}, &process{url: b.url, token: login.Token}
	prov := must(t, onA, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)["id"]
	agent := must(t, onA, "POST", "/api/v1/agents", map[string]any{"name": "long", "model": "long", "provider_id": prov}, 201)["id"]
	sid := must(t, onA, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent, "name": "s"}, 201)["id"].(string)
	runID := must(t, onA, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "stream please"}, 201)["run_id"].(string)

	fromA, fromB := onA.openSSE(t, runID, 0), onB.openSSE(t, runID, 0)
	heard := map[string][]domain.Event{}
	for name, s := range map[string]*sseStream{"A": fromA, "B": fromB} {
		ev, ok := s.next(t)
		if !ok || ev.Type != domain.EventRunStarted {
			t.Fatalf("%s's stream began with %v", name, ev.Type)
		}
		heard[name] = append(heard[name], ev.Event)
	}
	// B follows the run live: a step A streams reaches it.
	for {
		ev, ok := fromB.next(t)
		if !ok {
			t.Fatalf("B's stream ended before the delete, after %d events\nA's log:\n%s\nB's log:\n%s", len(heard["B"]), a.stderr, b.stderr)
		}
		heard["B"] = append(heard["B"], ev.Event)
		if ev.Type == domain.EventStep {
			break
		}
	}

	asked := time.Now()
	must(t, b, "DELETE", "/api/v1/auth/users/"+user, nil, 204)
	t.Logf("deleting the account on B, its run on A stopped first, took %s", time.Since(asked).Round(time.Millisecond))
	for name, s := range map[string]*sseStream{"A": fromA, "B": fromB} {
		evs := append(heard[name], eventsOf(t, s)...)
		last := typeAt(evs, len(evs)-1)
		if last != domain.EventCancelled || !strings.Contains(string(evs[len(evs)-1].Payload), `"account_deleted"`) {
			t.Fatalf("%s's stream ended with %s, want run.cancelled account_deleted\nA's log:\n%s", name, last, a.stderr)
		}
		// Every event once, in order: B heard the run's end after all
		// that came before it, not only the stored ending.
		wholeOnce(t, name+"'s stream", evs)
	}
	// The run ended before its rows went with the account: nothing of it
	// is left on either replica, and the member is signed out everywhere.
	for _, p := range []*process{a, b} {
		must(t, p, "GET", "/api/v1/runs/"+runID, nil, 404)
	}
	// (A forgets its cached copy of the token when B's closing reaches it.)
	must(t, onB, "GET", "/api/v1/auth/me", nil, 401)
	slowPoll(t, func() bool { code, _, _ := onA.call(t, "GET", "/api/v1/auth/me", nil); return code == 401 })
	if log := a.stderr.String(); strings.Contains(log, "recording a run's end failed") {
		t.Fatalf("A could not record the run's end:\n%s", log)
	}
}

// A workflow between two steps whose next launch a replica owed when it
// died goes on elsewhere: its first step ended and advanced it, its next
// step waits queued behind the conversation's live-task cap, and the
// replica that would launch it — the one running the task that holds the
// cap — is SIGKILLed. The failover ends that task and, the queue stalled,
// launches the workflow's next step on a survivor, where it completes.
// (The exact instant between a step's end and its driver's launch is too
// short to kill a process in; core/tasks's
// TestAWorkflowStalledBetweenStepsGoesOnWhenPumped takes it.)
func TestReplicasContinueAWorkflowLeftBetweenSteps(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("long", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{slowText(60)}}}})
	model.SetScript("gated", gatedScript())
	model.SetScript("quick", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "finished the job"}}}}})
	model.SetScript("chat", taskExchanges([]scripted.Step{{EchoInput: true}}))
	a := startReplica(t, url)
	b := startReplica(t, url)
	must := func(t *testing.T, p *process, method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
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
	slow, quick, chat := agent("long", nil), agent("quick", nil), agent("chat", nil)
	careful := agent("gated", map[string]any{"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	workflow := func(name string, steps ...map[string]any) string {
		return must(t, a, "POST", "/api/v1/workflows", map[string]any{"name": name, "description": name + " things", "steps": steps}, 201)["id"].(string)
	}
	hold := workflow("hold", map[string]any{"name": "hold", "agent": slow, "prompt": "hold the slot"})
	job := workflow("job", map[string]any{"name": "ask", "agent": careful, "prompt": "note it"},
		map[string]any{"name": "finish", "agent": quick, "prompt": "finish it"})
	parent := must(t, a, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": chat, "name": "p"}, 201)["id"].(string)
	task := func(t *testing.T, p *process, id string) (domain.TaskInfo, domain.WorkflowState) {
		t.Helper()
		_, _, raw := p.call(t, "GET", "/api/v1/tasks/"+id, nil)
		var info domain.TaskInfo
		var st domain.WorkflowState
		json.Unmarshal(raw, &info)
		json.Unmarshal(info.State, &st)
		return info, st
	}

	// Both executions start on A, under a cap of two: the slow one holds
	// a slot, the other's first step waits for a decision.
	must(t, a, "PUT", "/api/v1/settings/max_tasks_per_session", map[string]string{"value": "2"}, 200)
	holder := must(t, a, "POST", "/api/v1/workflows/"+hold+"/runs", map[string]any{"session_id": parent, "input": "hold"}, 201)["task_id"].(string)
	stalled := must(t, a, "POST", "/api/v1/workflows/"+job+"/runs", map[string]any{"session_id": parent, "input": "the job"}, 201)["task_id"].(string)
	var approval string
	slowPoll(t, func() bool {
		_, _, raw := a.call(t, "GET", "/api/v1/approvals", nil)
		var pending []httpapi.ApprovalView
		json.Unmarshal(raw, &pending)
		if len(pending) == 1 {
			approval = pending[0].ID
		}
		return approval != ""
	})
	// With the cap down to one, the first step's end advances the
	// execution and leaves its next step queued behind the holder, which
	// A would launch once the holder ends.
	must(t, a, "PUT", "/api/v1/settings/max_tasks_per_session", map[string]string{"value": "1"}, 200)
	must(t, a, "POST", "/api/v1/approvals/"+approval+"/approve", nil, 200)
	slowPoll(t, func() bool {
		info, st := task(t, a, stalled)
		return info.Status == domain.TaskWorking && info.Queued && len(st.StepRuns) == 1 && st.StepRuns[0].Ending == domain.StepCompleted
	})
	if info, _ := task(t, a, holder); info.Status != domain.TaskWorking || info.Queued {
		t.Fatalf("the holder is %s queued %v", info.Status, info.Queued)
	}

	a.cmd.Process.Signal(syscall.SIGKILL)
	a.wait(t)
	killed := time.Now()
	// B's failover fails the holder (its run died with A) and, the queue
	// stalled, starts the workflow's next step: the execution completes.
	slowPoll(t, func() bool { info, _ := task(t, b, holder); return info.Status == domain.TaskFailed })
	slowPoll(t, func() bool { info, _ := task(t, b, stalled); return info.Status.Terminal() })
	t.Logf("the workflow's next step ran to its end on B %s after the kill (bound %s)", time.Since(killed).Round(time.Millisecond), replicaFailover)
	info, st := task(t, b, stalled)
	if info.Status != domain.TaskCompleted || info.Result != "finished the job" || len(st.StepRuns) != 2 ||
		st.StepRuns[1].Ending != domain.StepCompleted {
		t.Fatalf("the execution ended %s %q after %d step runs\nB's log:\n%s", info.Status, info.Result, len(st.StepRuns), b.stderr)
	}
	if !strings.Contains(b.stderr.String(), "launching the tasks a gone replica left queued") {
		t.Fatalf("B's log does not say it took the queue over:\n%s", b.stderr)
	}
}

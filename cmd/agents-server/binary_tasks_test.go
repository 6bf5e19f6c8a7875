package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// notificationsOf are the wake-up inputs in a session's transcript, read
// through the binary's API.
func notificationsOf(t *testing.T, p *process, sessionID string) []string {
	t.Helper()
	_, _, raw := p.call(t, "GET", "/api/v1/sessions/"+sessionID+"/messages", nil)
	var msgs []httpapi.EntryView
	if err := json.Unmarshal(raw, &msgs); err != nil {
		t.Fatalf("messages: %s", raw)
	}
	var out []string
	for _, m := range msgs {
		if m.Source == domain.SourceTaskNotification {
			out = append(out, domain.ParseItem(m.Item).Text())
		}
	}
	return out
}

func TestATaskCutShortBySIGKILLFailsAndTheParentIsToldOnce(t *testing.T) {
	t.Parallel()
	model, modelURL := startScripted(t)
	model.SetScript("boss", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("LONG-JOB", "long job")}}, {Text: "Spawned."}},
		scripted.Exchange{When: "LONG-JOB", Steps: []scripted.Step{slowText(120)}},
		scripted.Exchange{When: "hello again", Steps: []scripted.Step{{Text: "Hello."}}},
	))
	dir := t.TempDir()
	p := startBinary(t, dir)
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	_, agent, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "boss", "model": "boss", "provider_id": prov["id"]})
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": "s"})
	sid := sess["id"].(string)
	if code, run, raw := p.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "delegate"}, "Prefer", "wait=30"); code != 200 ||
		run["status"] != "completed" {
		t.Fatalf("start: %d %s", code, raw)
	}
	var tasks []httpapi.TaskView
	waitFor(t, func() bool {
		_, _, raw := p.call(t, "GET", "/api/v1/sessions/"+sid+"/tasks", nil)
		json.Unmarshal(raw, &tasks)
		if len(tasks) != 1 {
			return false
		}
		// Working, with its run streaming text.
		_, _, raw = p.call(t, "GET", "/api/v1/sessions/"+tasks[0].ChildSessionID+"/messages", nil)
		return tasks[0].Status == domain.TaskWorking && !tasks[0].Queued && strings.Contains(string(raw), "LONG-JOB")
	})
	taskID := tasks[0].TaskID

	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	p2 := startBinary(t, dir)
	var task httpapi.TaskView
	_, _, raw := p2.call(t, "GET", "/api/v1/tasks/"+taskID, nil)
	json.Unmarshal(raw, &task)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "restarted") {
		t.Fatalf("after the kill: %s", raw)
	}
	// The parent is told once, by one wake-up run that the model answers.
	waitFor(t, func() bool {
		_, _, raw := p2.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
		return len(notificationsOf(t, p2, sid)) == 1 && strings.Contains(string(raw), "Noted the background results.")
	})
	if note := notificationsOf(t, p2, sid)[0]; !strings.Contains(note, "task_id="+taskID) || !strings.Contains(note, "status=failed") ||
		!strings.Contains(note, "task_retry") {
		t.Fatalf("notification = %q", note)
	}
	p2.cmd.Process.Signal(syscall.SIGTERM)
	p2.wait(t)

	// A second restart owes nothing: a run on the parent starts at once
	// (no wake-up holds the session) and its end pays no debt twice.
	p3 := startBinary(t, dir)
	if code, run, raw := p3.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "hello again"}, "Prefer", "wait=30"); code != 200 ||
		run["status"] != "completed" {
		t.Fatalf("a run after the second restart: %d %s", code, raw)
	}
	// A wake-up would start as that run let go of the session: look a
	// while for one (an absence has no event to wait for).
	for range 10 {
		if n := len(notificationsOf(t, p3, sid)); n != 1 {
			t.Fatalf("%d notifications after a second restart, want 1", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestAWorkflowCutShortBySIGKILLFailsAtItsStep(t *testing.T) {
	t.Parallel()
	model, modelURL := startScripted(t)
	model.SetScript("lead", taskExchanges([]scripted.Step{{Text: "Hi."}}))
	model.SetScript("worker", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "SLOW-STEP", Steps: []scripted.Step{slowText(120)}},
		{Steps: []scripted.Step{{Text: "First step done."}}},
	}})
	dir := t.TempDir()
	p := startBinary(t, dir)
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	_, lead, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "lead", "model": "lead", "provider_id": prov["id"]})
	_, worker, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "worker", "model": "worker", "provider_id": prov["id"]})
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": lead["id"], "name": "s"})
	sid := sess["id"].(string)
	code, wf, raw := p.call(t, "POST", "/api/v1/workflows", map[string]any{"name": "two", "description": "two steps", "steps": []map[string]any{
		{"name": "first", "agent": worker["id"], "prompt": "Do the first part."},
		{"name": "second", "agent": worker["id"], "prompt": "SLOW-STEP: do the second part."},
	}})
	if code != 201 {
		t.Fatalf("workflow: %d %s", code, raw)
	}
	code, started, raw := p.call(t, "POST", "/api/v1/workflows/"+wf["id"].(string)+"/runs", map[string]any{"session_id": sid, "input": "go"})
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	taskID := started["task_id"].(string)
	state := func(p *process) (httpapi.TaskView, domain.WorkflowState) {
		var task httpapi.TaskView
		var st domain.WorkflowState
		_, _, raw := p.call(t, "GET", "/api/v1/tasks/"+taskID, nil)
		json.Unmarshal(raw, &task)
		json.Unmarshal(task.State, &st)
		return task, st
	}
	// Killed while its second step streams.
	waitFor(t, func() bool {
		task, st := state(p)
		if len(st.StepRuns) != 2 {
			return false
		}
		_, _, raw := p.call(t, "GET", "/api/v1/sessions/"+task.ChildSessionID+"/messages", nil)
		return task.Status == domain.TaskWorking && strings.Contains(string(raw), "SLOW-STEP")
	})
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	p2 := startBinary(t, dir)
	task, st := state(p2)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result, "stopped at step 2/2 (second)") ||
		!strings.Contains(task.Result, "restarted") {
		t.Fatalf("after the kill: %s %q", task.Status, task.Result)
	}
	if len(st.StepRuns) != 2 || st.StepRuns[0].Ending != domain.StepCompleted || st.StepRuns[1].Ending != domain.StepFailed ||
		st.StepRuns[1].EndedAt == nil {
		t.Fatalf("launch log after the kill = %+v", st.StepRuns)
	}
	// The parent is told, once.
	waitFor(t, func() bool {
		notes := notificationsOf(t, p2, sid)
		return len(notes) == 1 && strings.Contains(notes[0], "task_id="+taskID) && strings.Contains(notes[0], "status=failed")
	})
	p2.cmd.Process.Signal(syscall.SIGTERM)
	p2.wait(t)
}

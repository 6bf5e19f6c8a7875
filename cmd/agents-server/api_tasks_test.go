package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// Background tasks against the scripted model: the parent's script spawns,
// each task's script answers its prompt, and a wake-up's
// [task-notification] input gets its own answer.

// spawnCall is a spawn_task call.
func spawnCall(prompt, label string) scripted.ToolCall {
	args, _ := json.Marshal(map[string]string{"prompt": prompt, "label": label})
	return scripted.ToolCall{Name: "spawn_task", Arguments: string(args)}
}

// taskExchanges answer a wake-up, then the given task prompts, then
// whatever the chat says with chat.
func taskExchanges(chat []scripted.Step, tasks ...scripted.Exchange) scripted.Script {
	ex := []scripted.Exchange{{When: "[task-notification]", Steps: []scripted.Step{{Text: "Noted the background results."}}}}
	ex = append(ex, tasks...)
	return scripted.Script{Exchanges: append(ex, scripted.Exchange{Steps: chat})}
}

// slowText streams for about seconds seconds, so its run is still working
// while the test acts on it.
func slowText(seconds int) scripted.Step {
	return scripted.Step{Text: strings.Repeat("x", seconds*10), ChunkSize: 1, DelayMS: 100}
}

// taskSetup is a member with an agent on the scripted model and a session.
type taskSetup struct {
	h       *harness
	model   *scripted.Server
	token   string
	agentID string
	session string
}

func newTaskSetup(t *testing.T, name string, script scripted.Script, agent map[string]any) taskSetup {
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	tok := h.member(name)
	agent["name"], agent["model"] = name, name
	id := h.agentOn(tok, protocols(url)["openai-responses"], agent)
	model.SetScript(name, script)
	s := h.createSession(tok, map[string]any{"agent_config_id": id, "name": name})
	return taskSetup{h: h, model: model, token: tok, agentID: id, session: s.ID}
}

func (s taskSetup) tasks() []httpapi.TaskView {
	s.h.t.Helper()
	var out []httpapi.TaskView
	s.h.call("GET", "/api/v1/sessions/"+s.session+"/tasks", s.token, nil).want(s.h.t, 200).decode(s.h.t, &out)
	return out
}

func (s taskSetup) task(id string) httpapi.TaskView {
	s.h.t.Helper()
	var out httpapi.TaskView
	s.h.call("GET", "/api/v1/tasks/"+id, s.token, nil).want(s.h.t, 200).decode(s.h.t, &out)
	return out
}

// waitTasks waits until the session has n tasks that all satisfy ok.
func (s taskSetup) waitTasks(n int, ok func(httpapi.TaskView) bool) []httpapi.TaskView {
	s.h.t.Helper()
	var list []httpapi.TaskView
	waitFor(s.h.t, func() bool {
		list = s.tasks()
		if len(list) != n {
			return false
		}
		for _, t := range list {
			if !ok(t) {
				return false
			}
		}
		return true
	})
	return list
}

func status(st domain.TaskStatus) func(httpapi.TaskView) bool {
	return func(t httpapi.TaskView) bool { return t.Status == st }
}

// notifications are the wake-up inputs of a session's transcript.
func (s taskSetup) notifications() []httpapi.EntryView {
	var out []httpapi.EntryView
	for _, e := range s.h.messages(s.token, s.session, "") {
		if e.Source == domain.SourceTaskNotification {
			out = append(out, e)
		}
	}
	return out
}

// idle waits until no run holds the session.
func (s taskSetup) idle() {
	waitFor(s.h.t, func() bool { _, busy := workbenchparts.Of(s.h.app.wb).Runs.Hub().Busy(s.session); return !busy })
}

// woken waits until the session has had n wake-ups, each answered, and
// returns their inputs.
func (s taskSetup) woken(n int) []string {
	s.h.t.Helper()
	var texts []string
	waitFor(s.h.t, func() bool {
		notes := s.notifications()
		if len(notes) != n {
			return false
		}
		msgs := s.h.messages(s.token, s.session, "")
		last := domain.ParseItem(msgs[len(msgs)-1].Item)
		if last.Text() != "Noted the background results." {
			return false
		}
		texts = texts[:0]
		for _, e := range notes {
			texts = append(texts, domain.ParseItem(e.Item).Text())
		}
		return true
	})
	return texts
}

func TestASpawnedTaskCompletesAndWakesTheParentOnce(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "boss", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("RESEARCH-A: find the answer", "research A")}}, {Text: "Spawned it."}},
		scripted.Exchange{When: "RESEARCH-A", Steps: []scripted.Step{{Text: "The answer is 42."}}},
	), map[string]any{})
	h, tok := s.h, s.token
	h.startRun(tok, s.session, map[string]any{"input": "please delegate"})

	done := s.waitTasks(1, status(domain.TaskCompleted))[0]
	if done.Result != "The answer is 42." || done.Summary != "The answer is 42." || done.Label != "research A" ||
		done.Attempt != 1 || done.Kind != domain.TaskAgent || done.ToolCallID == "" || done.ParentRunID == "" || done.Queued {
		t.Fatalf("task = %+v", done)
	}
	texts := s.woken(1)
	if !strings.HasPrefix(texts[0], "[task-notification] ") || !strings.Contains(texts[0], "task_id="+done.TaskID) ||
		!strings.Contains(texts[0], `result="The answer is 42."`) || !strings.Contains(texts[0], "not a request from the person") {
		t.Fatalf("notification = %q", texts[0])
	}
	// The task's run says what it is an attempt of, on GET and on its
	// replayed run.started.
	var run httpapi.RunView
	h.call("GET", "/api/v1/runs/"+done.RunID, tok, nil).want(t, 200).decode(t, &run)
	if run.Task == nil || run.Task.TaskID != done.TaskID || run.Task.ParentSessionID != s.session || run.Task.Label != "research A" {
		t.Fatalf("task run = %+v", run)
	}
	started := payload[domain.RunStartedPayload](t, h.openSSE(tok, done.RunID, 0).all(t)[0].Event)
	if started.TaskID != done.TaskID || started.ToolCallID != done.ToolCallID || started.ParentRunID != done.ParentRunID {
		t.Fatalf("run.started = %+v", started)
	}
	// The task's session is hidden from the list, readable by its owner.
	var sessions []httpapi.SessionView
	h.call("GET", "/api/v1/sessions", tok, nil).want(t, 200).decode(t, &sessions)
	if len(sessions) != 1 {
		t.Fatalf("sessions = %+v", sessions)
	}
	// Its task runs it: nobody else starts a run there.
	h.call("POST", "/api/v1/sessions/"+done.ChildSessionID+"/runs", tok, map[string]any{"input": "hi"}).wantErr(t, 409, "conflict")
	child := h.messages(tok, done.ChildSessionID, "")
	if len(child) != 2 || domain.ParseItem(child[1].Item).Text() != "The answer is 42." {
		t.Fatalf("the task's transcript = %+v", child)
	}
	// Its spawn_task card ends with the task.
	var card *domain.Display
	for _, e := range h.messages(tok, s.session, "") {
		if it := domain.ParseItem(e.Item); it.Kind() == domain.ItemFunctionCall && it.CallID == done.ToolCallID && e.Display != nil {
			card = e.Display
		}
	}
	if card == nil || card.Extra["task_status"] != "completed" || card.Extra["task_id"] != done.TaskID {
		t.Fatalf("spawn card = %+v", card)
	}
	// The cross-session list, its filters and paging.
	var list httpapi.TaskListView
	h.call("GET", "/api/v1/tasks", tok, nil).want(t, 200).decode(t, &list)
	if list.Total != 1 || len(list.Tasks) != 1 || list.Tasks[0].SessionName != "boss" {
		t.Fatalf("tasks = %+v", list)
	}
	h.call("GET", "/api/v1/tasks?live=true", tok, nil).want(t, 200).decode(t, &list)
	if list.Total != 0 {
		t.Fatalf("live tasks = %+v", list)
	}
	h.call("GET", "/api/v1/tasks?kind=workflow", tok, nil).want(t, 200).decode(t, &list)
	if list.Total != 0 {
		t.Fatalf("workflow tasks = %+v", list)
	}
	h.call("GET", "/api/v1/tasks?kind=nope", tok, nil).want(t, 400)
	// Another member sees none of it.
	other := h.member("other")
	h.call("GET", "/api/v1/tasks/"+done.TaskID, other, nil).want(t, 404)
	h.call("GET", "/api/v1/sessions/"+s.session+"/tasks", other, nil).want(t, 404)
	h.call("POST", "/api/v1/tasks/"+done.TaskID+"/stop", other, nil).want(t, 404)
	// Final: stop and retry refuse, dismiss hides it from the live lists.
	h.call("POST", "/api/v1/tasks/"+done.TaskID+"/stop", tok, nil).want(t, 409)
	h.call("POST", "/api/v1/tasks/"+done.TaskID+"/retry", tok, nil).want(t, 409)
	var dismissed httpapi.TaskView
	h.call("POST", "/api/v1/tasks/"+done.TaskID+"/dismiss", tok, nil).want(t, 200).decode(t, &dismissed)
	if !dismissed.Dismissed {
		t.Fatalf("dismissed = %+v", dismissed)
	}
	s.idle()
	if n := len(s.notifications()); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
}

func TestTasksFinishingTogetherWakeOnceAndAStoppedOneOwesNothing(t *testing.T) {
	t.Parallel()
	todo := scripted.ToolCall{Name: "todo_write", Arguments: `{"todos":[{"content":"wait","status":"pending"}]}`}
	s := newTaskSetup(t, "fan", taskExchanges(
		[]scripted.Step{
			{ToolCalls: []scripted.ToolCall{spawnCall("JOB-ONE", "one"), spawnCall("JOB-TWO", "two"), spawnCall("JOB-SLOW", "slow")}},
			{ToolCalls: []scripted.ToolCall{todo}}, // waits for a decision while the tasks work
			{Text: "All started."},
		},
		scripted.Exchange{When: "JOB-ONE", Steps: []scripted.Step{{Text: "one done"}}},
		scripted.Exchange{When: "JOB-TWO", Steps: []scripted.Step{{Text: "two done"}}},
		scripted.Exchange{When: "JOB-SLOW", Steps: []scripted.Step{slowText(60)}},
	), map[string]any{"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	h, tok := s.h, s.token
	h.startRun(tok, s.session, map[string]any{"input": "fan out"})
	var pending []httpapi.ApprovalView
	waitFor(t, func() bool { pending = h.approvals(tok, s.session); return len(pending) == 1 })
	byLabel := map[string]httpapi.TaskView{}
	waitFor(t, func() bool {
		for _, tk := range s.tasks() {
			byLabel[tk.Label] = tk
		}
		return byLabel["one"].Status == domain.TaskCompleted && byLabel["two"].Status == domain.TaskCompleted
	})
	// The parent waits for a decision: nothing may supersede it.
	if n := len(s.notifications()); n != 0 {
		t.Fatalf("a wake-up while the parent was paused: %d", n)
	}
	var stopped httpapi.TaskView
	h.call("POST", "/api/v1/tasks/"+byLabel["slow"].TaskID+"/stop", tok, nil).want(t, 200).decode(t, &stopped)
	if stopped.Status != domain.TaskCancelled {
		t.Fatalf("stopped = %+v", stopped)
	}
	h.call("POST", "/api/v1/tasks/"+byLabel["slow"].TaskID+"/stop", tok, nil).want(t, 409)
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).want(t, 200)
	texts := s.woken(1)
	for _, want := range []string{byLabel["one"].TaskID, byLabel["two"].TaskID, "one done", "two done"} {
		if !strings.Contains(texts[0], want) {
			t.Fatalf("the wake-up lacks %q: %q", want, texts[0])
		}
	}
	if strings.Contains(texts[0], byLabel["slow"].TaskID) {
		t.Fatalf("a stopped task reported back: %q", texts[0])
	}
	s.idle()
	if n := len(s.notifications()); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
	// The stopped task's run ended cancelled.
	var run httpapi.RunView
	h.call("GET", "/api/v1/runs/"+stopped.RunID, tok, nil).want(t, 200).decode(t, &run)
	if run.Status != "cancelled" {
		t.Fatalf("stopped task's run = %+v", run)
	}
}

func TestAFailedTaskIsRetriedToSuccessAndAttemptsRunOut(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "retrier", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("FLAKY-JOB", "flaky"), spawnCall("BROKEN-JOB", "broken")}}, {Text: "Started."}},
		scripted.Exchange{When: "FLAKY-JOB", Steps: []scripted.Step{{Text: "flaky finally worked", FailTimes: 1,
			Error: &scripted.Failure{Status: 400, Message: "flaky failure"}}}},
		scripted.Exchange{When: "BROKEN-JOB", Steps: []scripted.Step{{Error: &scripted.Failure{Status: 400, Message: "always broken"}}}},
	), map[string]any{})
	h, tok := s.h, s.token
	h.startRun(tok, s.session, map[string]any{"input": "try things"})
	failed := s.waitTasks(2, status(domain.TaskFailed))
	byLabel := map[string]httpapi.TaskView{}
	for _, tk := range failed {
		byLabel[tk.Label] = tk
	}
	if !strings.Contains(byLabel["flaky"].Result, "flaky failure") {
		t.Fatalf("failed task = %+v", byLabel["flaky"])
	}
	var retried httpapi.TaskView
	h.call("POST", "/api/v1/tasks/"+byLabel["flaky"].TaskID+"/retry", tok, nil).want(t, 200).decode(t, &retried)
	// The new attempt may already have finished by the time the retry
	// answers (a run is quick): what must be gone is the failure's result.
	if retried.Attempt != 2 || retried.Status == domain.TaskFailed || retried.RunID == byLabel["flaky"].RunID ||
		retried.Result == byLabel["flaky"].Result {
		t.Fatalf("retried = %+v", retried)
	}
	waitFor(t, func() bool { return s.task(retried.TaskID).Status == domain.TaskCompleted })
	if got := s.task(retried.TaskID); got.Result != "flaky finally worked" || got.Attempt != 2 {
		t.Fatalf("after the retry = %+v", got)
	}
	// The retry read why it runs again, with the task once more.
	child := h.messages(tok, retried.ChildSessionID, "")
	var inputs []string
	for _, e := range child {
		if it := domain.ParseItem(e.Item); it.Kind() == domain.ItemMessage && it.Role == "user" {
			inputs = append(inputs, it.Text())
		}
	}
	if len(inputs) != 2 || !strings.Contains(inputs[1], "attempt 2 of 3") || !strings.Contains(inputs[1], "FLAKY-JOB") {
		t.Fatalf("the attempts' inputs = %q", inputs)
	}
	// The broken one fails three times, then refuses.
	broken := byLabel["broken"].TaskID
	for attempt := 2; attempt <= domain.MaxTaskAttempts; attempt++ {
		h.call("POST", "/api/v1/tasks/"+broken+"/retry", tok, nil).want(t, 200)
		waitFor(t, func() bool { tk := s.task(broken); return tk.Status == domain.TaskFailed && tk.Attempt == attempt })
	}
	r := h.call("POST", "/api/v1/tasks/"+broken+"/retry", tok, nil).want(t, 409)
	if !strings.Contains(string(r.Body), "attempts") {
		t.Fatalf("out of attempts: %s", r.Body)
	}
	// The ends were reported — the last failure with the retry hint — and
	// never as a state a later retry put the task in.
	var all strings.Builder
	waitFor(t, func() bool {
		all.Reset()
		for _, e := range s.notifications() {
			all.WriteString(domain.ParseItem(e.Item).Text())
		}
		return strings.Contains(all.String(), "task_retry(task_id)") && strings.Contains(all.String(), "flaky finally worked")
	})
	if strings.Contains(all.String(), "status=working") {
		t.Fatalf("a report of an ended attempt names the task's later state: %q", all.String())
	}
}

func TestTheCapQueuesTheThirdSpawnUntilOneEnds(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "capped", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("SLOW-1", "one"), spawnCall("SLOW-2", "two"), spawnCall("SLOW-3", "three")}},
			{Text: "Started three."}},
		scripted.Exchange{When: "SLOW-", Steps: []scripted.Step{slowText(60)}},
	), map[string]any{})
	h, tok := s.h, s.token
	h.call("PUT", "/api/v1/settings/max_tasks_per_session", h.admin, map[string]any{"value": "2"}).want(t, 200)
	h.startRun(tok, s.session, map[string]any{"input": "three things"})
	// The spawns run side by side: whichever reached the cap third waits
	// (not necessarily the one whose row was written last: the three calls
	// race, a millisecond apart).
	var launched []httpapi.TaskView
	var queued httpapi.TaskView
	waitFor(t, func() bool {
		launched, queued = nil, httpapi.TaskView{}
		list := s.tasks()
		for _, tk := range list {
			if tk.Queued {
				queued = tk
			} else {
				launched = append(launched, tk)
			}
		}
		return len(list) == 3 && len(launched) == 2 && queued.TaskID != ""
	})
	if queued.Status != domain.TaskWorking || launched[0].Status != domain.TaskWorking || launched[1].Status != domain.TaskWorking {
		t.Fatalf("queued %+v while %+v run", queued, launched)
	}
	h.call("GET", "/api/v1/runs/"+queued.RunID, tok, nil).want(t, 404) // not started
	h.call("POST", "/api/v1/tasks/"+launched[0].TaskID+"/stop", tok, nil).want(t, 200)
	waitFor(t, func() bool { return !s.task(queued.TaskID).Queued })
	var run httpapi.RunView
	h.call("GET", "/api/v1/runs/"+queued.RunID, tok, nil).want(t, 200).decode(t, &run)
	if run.Task == nil || run.Task.TaskID != queued.TaskID {
		t.Fatalf("the queued task's run = %+v", run)
	}
	for _, id := range []string{launched[1].TaskID, queued.TaskID} {
		h.call("POST", "/api/v1/tasks/"+id+"/stop", tok, nil).want(t, 200)
	}
}

func TestATaskApprovalIsDecidedFromTheParent(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	tok := h.member("lead")
	prov := h.createProvider(tok, protocols(url)["openai-responses"]).ID
	helper := h.createAgent(tok, map[string]any{"name": "helper", "model": "helper", "provider_id": prov,
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}}).ID
	model.SetScript("helper", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"careful","status":"pending"}]}`}}},
		{Text: "helper finished"}}}}})
	args, _ := json.Marshal(map[string]string{"prompt": "GATED-JOB", "label": "gated", "agent": "helper"})
	lead := h.createAgent(tok, map[string]any{"name": "lead", "model": "lead", "provider_id": prov, "handoffs": []string{helper}}).ID
	model.SetScript("lead", taskExchanges([]scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "spawn_task", Arguments: string(args)}}},
		{Text: "Delegated."}}))
	sess := h.createSession(tok, map[string]any{"agent_config_id": lead, "name": "lead"})
	s := taskSetup{h: h, model: model, token: tok, agentID: lead, session: sess.ID}
	h.startRun(tok, sess.ID, map[string]any{"input": "get help"})
	waiting := s.waitTasks(1, status(domain.TaskInputRequired))[0]
	if waiting.PendingCallID == "" || waiting.AgentConfigID != helper {
		t.Fatalf("waiting task = %+v", waiting)
	}
	var pending []httpapi.ApprovalView
	waitFor(t, func() bool { pending = h.approvals(tok, sess.ID); return len(pending) == 1 })
	if pending[0].TaskID != waiting.TaskID || pending[0].ToolCallID != waiting.PendingCallID || pending[0].SessionID != waiting.ChildSessionID {
		t.Fatalf("the parent's approvals = %+v", pending)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).want(t, 200)
	done := s.waitTasks(1, status(domain.TaskCompleted))[0]
	if done.Result != "helper finished" || done.PendingCallID != "" {
		t.Fatalf("done = %+v", done)
	}
	if texts := s.woken(1); !strings.Contains(texts[0], "helper finished") {
		t.Fatalf("wake-up = %q", texts[0])
	}
}

func TestATaskCannotSpawnAndDeletingTheParentStopsItsTasks(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "nested", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("NESTED-JOB", "nested")}}, {Text: "Started."}},
		scripted.Exchange{When: "NESTED-JOB", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{spawnCall("GRANDCHILD", "deeper")}},
			slowText(60)}},
	), map[string]any{})
	h, tok := s.h, s.token
	h.startRun(tok, s.session, map[string]any{"input": "go deep"})
	task := s.waitTasks(1, status(domain.TaskWorking))[0]
	// The task's run was offered no task verbs; its call of one is refused.
	var output string
	waitFor(t, func() bool {
		for _, e := range h.messages(tok, task.ChildSessionID, "") {
			if it := domain.ParseItem(e.Item); it.Kind() == domain.ItemFunctionCallOutput {
				output = it.OutputText()
				return true
			}
		}
		return false
	})
	if !strings.Contains(output, `no tool named "spawn_task"`) {
		t.Fatalf("the task's spawn answered %q", output)
	}
	taskRequests := 0
	for _, r := range s.model.Requests() {
		var body struct {
			Input []struct {
				Content any `json:"content"`
			} `json:"input"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if json.Unmarshal(r.Body, &body) != nil || len(body.Input) == 0 || body.Input[0].Content != "NESTED-JOB" {
			continue
		}
		taskRequests++
		for _, tool := range body.Tools {
			if tool.Name == "spawn_task" || tool.Name == "task_status" {
				t.Fatalf("a task's run was offered %s", tool.Name)
			}
		}
	}
	if taskRequests == 0 {
		t.Fatal("no request of the task's run was recorded")
	}
	if got := s.tasks(); len(got) != 1 {
		t.Fatalf("tasks = %+v", got)
	}
	h.call("DELETE", "/api/v1/sessions/"+s.session, tok, nil).want(t, 204)
	if _, busy := workbenchparts.Of(h.app.wb).Runs.Hub().Busy(task.ChildSessionID); busy {
		t.Fatal("the task's run outlived its conversation")
	}
	h.call("GET", "/api/v1/tasks/"+task.TaskID, tok, nil).want(t, 404)
	h.call("GET", "/api/v1/sessions/"+task.ChildSessionID+"/messages", tok, nil).want(t, 404)
	var list httpapi.TaskListView
	h.call("GET", "/api/v1/tasks", tok, nil).want(t, 200).decode(t, &list)
	if list.Total != 0 {
		t.Fatalf("tasks after the delete = %+v", list)
	}
}

func TestTheBusCarriesATasksRunAndItsUpdates(t *testing.T) {
	t.Parallel()
	s := newTaskSetup(t, "bus", taskExchanges(
		[]scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("BUS-JOB", "on the bus")}}, {Text: "Spawned."}},
		scripted.Exchange{When: "BUS-JOB", Steps: []scripted.Step{{Text: "bus job done"}}},
	), map[string]any{})
	ws := s.h.dialWS(s.token)
	s.h.startRun(s.token, s.session, map[string]any{"input": "go"})
	var taskRun domain.RunStartedPayload
	var wake domain.RunStartedPayload
	statuses := map[domain.TaskStatus]bool{}
	for !statuses[domain.TaskCompleted] || taskRun.TaskID == "" || wake.Source == "" {
		ev := ws.read()
		switch ev.Type {
		case domain.EventRunStarted:
			p := payload[domain.RunStartedPayload](t, ev)
			if p.TaskID != "" {
				taskRun = p
			}
			if p.Source == domain.SourceTaskNotification {
				wake = p
			}
		case domain.EventTaskUpdated:
			p := payload[domain.TaskInfo](t, ev)
			if p.Label != "on the bus" {
				t.Fatalf("task.updated = %+v", p)
			}
			statuses[p.Status] = true
		}
	}
	if taskRun.Label != "on the bus" || taskRun.ParentSessionID != s.session || taskRun.SessionID == s.session {
		t.Fatalf("the task's run.started = %+v", taskRun)
	}
	if wake.SessionID != s.session || !strings.HasPrefix(wake.Input, "[task-notification] ") {
		t.Fatalf("the wake-up's run.started = %+v", wake)
	}
	if !statuses[domain.TaskWorking] {
		t.Fatalf("statuses seen = %v", statuses)
	}
}

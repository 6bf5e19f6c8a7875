package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/ports/porttest"
)

// Triggers against the scripted model: a cron tick on a fake clock, signed
// webhook deliveries, fire now; both targets run to completion.

// trSetup is a member with a reporting agent (it echoes what it is asked)
// and a conversation on it.
type trSetup struct {
	h       *harness
	model   *scripted.Server
	token   string
	agent   string
	session string
}

func newTriggerSetup(t *testing.T, cfg config) trSetup {
	h := startServer(t, cfg)
	model, url := startScripted(t)
	tok := h.member("tr")
	p := h.createProvider(tok, protocols(url)["openai-responses"])
	s := trSetup{h: h, model: model, token: tok}
	s.agent = h.createAgent(tok, map[string]any{"name": "reporter", "model": "tr-reporter", "provider_id": p.ID}).ID
	model.SetScript("tr-reporter", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{EchoInput: true}}}}})
	s.session = h.createSession(tok, map[string]any{"agent_config_id": s.agent, "name": "reports"}).ID
	return s
}

// create adds a trigger into the setup's conversation; extra overrides.
func (s trSetup) create(extra map[string]any) httpapi.TriggerSecretView {
	s.h.t.Helper()
	body := map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent, "session_id": s.session,
		"brief": "Report on the delivery."}
	for k, v := range extra {
		body[k] = v
	}
	var v httpapi.TriggerSecretView
	s.h.call("POST", "/api/v1/triggers", s.token, body).want(s.h.t, 201).decode(s.h.t, &v)
	return v
}

func (s trSetup) get(id string) httpapi.TriggerView {
	s.h.t.Helper()
	var v httpapi.TriggerView
	s.h.call("GET", "/api/v1/triggers/"+id, s.token, nil).want(s.h.t, 200).decode(s.h.t, &v)
	return v
}

// deliver posts a signed delivery: the timestamp, the secret it is signed
// with and the body.
func (s trSetup) deliver(id, secret string, ts int64, body string) reply {
	s.h.t.Helper()
	stamp := strconv.FormatInt(ts, 10)
	return s.h.call("POST", "/hooks/"+id, "", body,
		triggers.TimestampHeader, stamp, triggers.SignatureHeader, "sha256="+triggers.Sign(secret, stamp, []byte(body)))
}

// transcript is the conversation as lines: notes by their display kind and
// title, messages by role and text.
func (s trSetup) transcript() []string {
	s.h.t.Helper()
	var out []string
	for _, e := range s.h.messages(s.token, s.session, "") {
		if e.Kind == "annotation" && e.Display != nil {
			out = append(out, "note "+e.Display.Kind+": "+e.Display.Title)
			continue
		}
		var item struct {
			Type, Role string
			Content    []struct{ Text string }
		}
		if json.Unmarshal(e.Item, &item) != nil || item.Type != "message" {
			continue
		}
		var text []string
		for _, c := range item.Content {
			text = append(text, c.Text)
		}
		out = append(out, item.Role+": "+strings.Join(text, ""))
	}
	return out
}

// answered waits until the conversation holds n answers and none running.
func (s trSetup) answered(n int) []string {
	s.h.t.Helper()
	var lines []string
	waitFor(s.h.t, func() bool {
		if _, busy := workbenchparts.Of(s.h.app.wb).Runs.Hub().Busy(s.session); busy {
			return false
		}
		lines = s.transcript()
		count := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "assistant: ") {
				count++
			}
		}
		return count >= n
	})
	return lines
}

func TestTriggersAreValidatedOwnedAndCapped(t *testing.T) {
	t.Parallel()
	s := newTriggerSetup(t, testConfig(t))
	h, tok := s.h, s.token

	d := h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "cron", "schedule": "@every 30s", "target": "agent",
		"agent_config_id": "nope", "session_id": "nope"}).wantErr(t, 400, "validation")
	for field, says := range map[string]string{"schedule": "at most once a minute", "agent_config_id": "no such agent",
		"session_id": "no such conversation", "brief": "is required"} {
		if !strings.Contains(d.Fields[field], says) {
			t.Errorf("field %s = %q, want it to say %q (all: %v)", field, d.Fields[field], says, d.Fields)
		}
	}
	d = h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "schedule": "@daily", "target": "workflow",
		"session_id": s.session, "brief": "b"}).wantErr(t, 400, "validation")
	if d.Fields["schedule"] == "" || !strings.Contains(d.Fields["workflow_id"], "required") {
		t.Fatalf("a webhook with a schedule and a workflow target without a workflow: %v", d.Fields)
	}
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "cron", "schedule": "0 0 * * * *", "target": "agent",
		"agent_config_id": s.agent, "session_id": s.session, "brief": "b"}).wantErr(t, 400, "validation")

	// A cron trigger is scheduled in the server's zone; its reads carry no secret.
	cron := s.create(map[string]any{"kind": "cron", "schedule": "@hourly", "name": "hourly report"})
	if cron.Secret != "" || cron.HookURL != "" || cron.NextFireAt == nil || cron.NextFireAt.Minute() != 0 || !cron.Enabled {
		t.Fatalf("cron trigger %+v", cron)
	}
	h.call("POST", "/api/v1/triggers/"+cron.ID+"/rotate", tok, nil).wantErr(t, 400, "validation")
	// Disabling drops its next tick; the kind cannot change.
	var off httpapi.TriggerView
	h.call("PUT", "/api/v1/triggers/"+cron.ID, tok, map[string]any{"schedule": "@hourly", "target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": "b", "enabled": false}).want(t, 200).decode(t, &off)
	if off.Enabled || off.NextFireAt != nil || off.Name != "" {
		t.Fatalf("disabled %+v", off)
	}
	h.call("POST", "/api/v1/triggers/"+cron.ID+"/fire", tok, nil).wantErr(t, 409, "conflict")
	h.call("PUT", "/api/v1/triggers/"+cron.ID, tok, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": "b"}).wantErr(t, 400, "validation")

	// A webhook's secret is shown once.
	hook := s.create(nil)
	if !strings.HasPrefix(hook.Secret, triggers.SecretPrefix) || hook.HookURL != h.base+"/hooks/"+hook.ID {
		t.Fatalf("webhook %+v", hook)
	}
	if again := h.call("GET", "/api/v1/triggers/"+hook.ID, tok, nil).want(t, 200); strings.Contains(string(again.Body), hook.Secret) {
		t.Fatal("a read shows the secret")
	}

	// Session content: another member sees nothing of it.
	bob := h.member("bob")
	h.call("GET", "/api/v1/triggers/"+hook.ID, bob, nil).wantErr(t, 404, "not_found")
	h.call("POST", "/api/v1/triggers/"+hook.ID+"/fire", bob, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/triggers/"+hook.ID, bob, nil).wantErr(t, 404, "not_found")
	var bobs []httpapi.TriggerView
	h.call("GET", "/api/v1/triggers", bob, nil).want(t, 200).decode(t, &bobs)
	if len(bobs) != 0 {
		t.Fatalf("bob lists %d triggers", len(bobs))
	}
	h.call("GET", "/api/v1/triggers?all=true", bob, nil).wantErr(t, 403, "forbidden")
	// An admin administers without reading: lists everyone's, may delete.
	var every []httpapi.TriggerView
	h.call("GET", "/api/v1/triggers?all=true", h.admin, nil).want(t, 200).decode(t, &every)
	if len(every) != 2 {
		t.Fatalf("an admin lists %d triggers, want 2", len(every))
	}
	h.call("GET", "/api/v1/triggers/"+hook.ID, h.admin, nil).wantErr(t, 404, "not_found")
	h.call("POST", "/api/v1/triggers/"+hook.ID+"/fire", h.admin, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/triggers/"+cron.ID, h.admin, nil).want(t, 204)
	bobSession := h.createSession(bob, map[string]any{"name": "b"}).ID
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent,
		"session_id": bobSession, "brief": "b"}).wantErr(t, 400, "validation")

	// Fifty per owner.
	for i := 1; i < domain.MaxTriggersPerOwner; i++ {
		s.create(map[string]any{"name": fmt.Sprint("t", i)})
	}
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": "b"}).wantErr(t, 409, "conflict")
	var mine []httpapi.TriggerView
	h.call("GET", "/api/v1/triggers", tok, nil).want(t, 200).decode(t, &mine)
	if len(mine) != domain.MaxTriggersPerOwner || mine[0].Name != fmt.Sprint("t", domain.MaxTriggersPerOwner-1) {
		t.Fatalf("listed %d, newest %q", len(mine), mine[0].Name)
	}

	// Deleting the conversation deletes its triggers.
	h.call("DELETE", "/api/v1/sessions/"+s.session, tok, nil).want(t, 204)
	h.call("GET", "/api/v1/triggers/"+hook.ID, tok, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/triggers", tok, nil).want(t, 200).decode(t, &mine)
	if len(mine) != 0 {
		t.Fatalf("%d triggers outlived their conversation", len(mine))
	}
}

func TestACronTriggerFiresOnceForATickOnAFakeClock(t *testing.T) {
	t.Parallel()
	clock := porttest.NewClock(time.Date(2026, 12, 1, 9, 59, 0, 0, time.UTC))
	cfg := testConfig(t)
	cfg.Clock, cfg.TriggerEvery = clock, 5*time.Millisecond
	s := newTriggerSetup(t, cfg)
	tr := s.create(map[string]any{"kind": "cron", "schedule": "0 * * * *", "name": "hourly", "brief": "Say the hour."})
	if tr.NextFireAt == nil || tr.NextFireAt.Minute() != 0 || !tr.NextFireAt.After(clock.Now()) || tr.NextFireAt.Sub(clock.Now()) > time.Hour {
		t.Fatalf("next fire %v", tr.NextFireAt)
	}
	next := *tr.NextFireAt

	// Before the tick nothing fires, however often the scheduler looks.
	clock.Set(next.Add(-time.Second))
	time.Sleep(50 * time.Millisecond)
	if got := s.get(tr.ID); got.LastFiredAt != nil {
		t.Fatalf("fired before its tick: %+v", got)
	}

	clock.Set(next)
	lines := s.answered(1)
	want := []string{"note trigger_fired: hourly", "user: Say the hour.", "assistant: You said: Say the hour."}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("conversation after the tick:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// The fire is recorded once its run has started, which may be after
	// the run's quick answer is in.
	var got httpapi.TriggerView
	waitFor(t, func() bool { got = s.get(tr.ID); return got.LastFiredAt != nil })
	if got.LastError != "" || got.LastStartedID == "" || got.NextFireAt == nil || !got.NextFireAt.Equal(next.Add(time.Hour)) {
		t.Fatalf("after the tick: %+v", got)
	}
	var run httpapi.RunView
	s.h.call("GET", "/api/v1/runs/"+got.LastStartedID, s.token, nil).want(t, 200).decode(t, &run)
	if run.Status != string(domain.RunCompleted) {
		t.Fatalf("the fired run is %s", run.Status)
	}

	// The scheduler keeps looking at the same moment: the tick is spent.
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(strings.Join(s.transcript(), "\n"), "note trigger_fired"); n != 1 {
		t.Fatalf("one tick fired %d times", n)
	}

	// A clock that jumps three ticks fires once, then waits for the next.
	clock.Set(next.Add(3*time.Hour + time.Minute))
	s.answered(2)
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(strings.Join(s.transcript(), "\n"), "note trigger_fired"); n != 2 {
		t.Fatalf("a jump over three ticks fired %d times in all, want 2", n)
	}
	if got := s.get(tr.ID); !got.NextFireAt.Equal(next.Add(4 * time.Hour)) {
		t.Fatalf("next fire after the jump %v, want %v", got.NextFireAt, next.Add(4*time.Hour))
	}
}

func TestTicksMissedWhileDownAreNotReplayed(t *testing.T) {
	t.Parallel()
	clock := porttest.NewClock(time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC))
	cfg := testConfig(t)
	cfg.Clock, cfg.TriggerEvery = clock, 5*time.Millisecond
	s := newTriggerSetup(t, cfg)
	tr := s.create(map[string]any{"kind": "cron", "schedule": "@hourly", "brief": "Hourly."})
	token := s.token
	s.h.stop()

	// Down across two ticks, back half past the hour.
	clock.Advance(2 * time.Hour)
	h2 := startServer(t, cfg)
	var got httpapi.TriggerView
	h2.call("GET", "/api/v1/triggers/"+tr.ID, token, nil).want(t, 200).decode(t, &got)
	if got.NextFireAt == nil || !got.NextFireAt.After(clock.Now()) || got.NextFireAt.Sub(clock.Now()) > time.Hour {
		t.Fatalf("after the downtime the next fire is %v (now %v)", got.NextFireAt, clock.Now())
	}
	time.Sleep(100 * time.Millisecond)
	h2.call("GET", "/api/v1/triggers/"+tr.ID, token, nil).want(t, 200).decode(t, &got)
	if got.LastFiredAt != nil || len(h2.messages(token, s.session, "")) != 0 {
		t.Fatalf("a missed tick fired after the restart: %+v", got)
	}
}

func TestWebhookDeliveriesAreSignedFreshAndFireOnce(t *testing.T) {
	t.Parallel()
	clock := porttest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	cfg := testConfig(t)
	cfg.Clock = clock
	s := newTriggerSetup(t, cfg)
	h := s.h
	hook := s.create(map[string]any{"name": "ci", "brief": "A build failed: say which."})
	now := clock.Now().Unix()
	body := `{"job":"lint","status":"failed"}`

	// Refused: a wrong secret, a stale timestamp, an oversized body, no
	// such hook (answered like a bad signature), a cron trigger's id.
	h.call("POST", "/hooks/"+hook.ID, "", body, triggers.TimestampHeader, strconv.FormatInt(now, 10),
		triggers.SignatureHeader, triggers.Sign("ags_wh_guess", strconv.FormatInt(now, 10), []byte(body))).wantErr(t, 401, "unauthorized")
	d := s.deliver(hook.ID, hook.Secret, now-301, body).wantErr(t, 401, "unauthorized")
	if !strings.Contains(d.Message, "5 minutes") {
		t.Fatalf("stale: %s", d.Message)
	}
	s.deliver(hook.ID, hook.Secret, now, strings.Repeat("x", domain.MaxHookBody+1)).wantErr(t, 413, "validation")
	s.deliver("01NOSUCHHOOK", hook.Secret, now, body).wantErr(t, 401, "unauthorized")
	cron := s.create(map[string]any{"kind": "cron", "schedule": "@daily"})
	s.deliver(cron.ID, hook.Secret, now, body).wantErr(t, 401, "unauthorized")
	if got := s.get(hook.ID); got.LastFiredAt != nil || len(s.transcript()) != 0 {
		t.Fatalf("a refused delivery fired: %+v", got)
	}

	// A signed delivery runs the agent on the brief with the payload.
	var fired httpapi.FireView
	s.deliver(hook.ID, hook.Secret, now, body).want(t, 201).decode(t, &fired)
	lines := s.answered(1)
	if len(lines) != 3 || lines[0] != "note trigger_fired: ci" || !strings.HasPrefix(lines[1], "user: A build failed: say which.\n\n<external source=\"trigger\">\n"+body+"\n</external>\n") ||
		!strings.Contains(lines[1], "not the person's request") || !strings.HasPrefix(lines[2], "assistant: You said: A build failed") {
		t.Fatalf("conversation:\n%s", strings.Join(lines, "\n"))
	}
	if got := s.get(hook.ID); got.LastStartedID != fired.RunID || fired.Task != nil || got.LastError != "" {
		t.Fatalf("fired %+v, trigger %+v", fired, got)
	}

	// The same delivery again is a replay; a new timestamp is a new one.
	d = s.deliver(hook.ID, hook.Secret, now, body).wantErr(t, 409, "conflict")
	if !strings.Contains(d.Message, "fired already") {
		t.Fatalf("replay: %s", d.Message)
	}
	s.deliver(hook.ID, hook.Secret, now+1, body).want(t, 201)
	s.answered(2)

	// A delivery refused before anything started may be resent as it was.
	h.call("PUT", "/api/v1/triggers/"+hook.ID, s.token, map[string]any{"target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": hook.Brief, "name": "ci", "enabled": false}).want(t, 200)
	s.deliver(hook.ID, hook.Secret, now+2, body).wantErr(t, 409, "conflict")
	h.call("PUT", "/api/v1/triggers/"+hook.ID, s.token, map[string]any{"target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": hook.Brief, "name": "ci", "enabled": true}).want(t, 200)
	s.model.SetScript("tr-reporter", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "Working on it slowly.", ChunkSize: 1, DelayMS: 20}}}}})
	var slow httpapi.FireView
	s.deliver(hook.ID, hook.Secret, now+3, body).want(t, 201).decode(t, &slow)
	d = s.deliver(hook.ID, hook.Secret, now+4, body).wantErr(t, 409, "conflict")
	if got := s.get(hook.ID); got.LastError != d.Message || got.LastStartedID != "" {
		t.Fatalf("a busy refusal is not the trigger's last_error: %+v vs %q", got, d.Message)
	}
	s.answered(3)
	s.deliver(hook.ID, hook.Secret, now+4, body).want(t, 201)
	s.answered(4)

	// Rotation: the old secret stops at once.
	var rotated httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers/"+hook.ID+"/rotate", s.token, nil).want(t, 200).decode(t, &rotated)
	if rotated.Secret == hook.Secret || !strings.HasPrefix(rotated.Secret, triggers.SecretPrefix) {
		t.Fatalf("rotated %+v", rotated)
	}
	s.deliver(hook.ID, hook.Secret, now+5, body).wantErr(t, 401, "unauthorized")
	s.deliver(hook.ID, rotated.Secret, now+5, body).want(t, 201)
	s.answered(5)
}

// A delivery that fired is remembered in the store, not the process: sent
// again after a restart, inside its window, it is still a replay.
func TestAWebhookDeliveryFiresOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	clock := porttest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	cfg := testConfig(t)
	cfg.Clock = clock
	s := newTriggerSetup(t, cfg)
	hook := s.create(nil)
	now := clock.Now().Unix()
	body := `{"job":"deploy"}`
	s.deliver(hook.ID, hook.Secret, now, body).want(t, 201)
	s.answered(1)

	s.h.stop()
	clock.Advance(time.Minute)
	s.h = startServer(t, cfg)
	d := s.deliver(hook.ID, hook.Secret, now, body).wantErr(t, 409, "conflict")
	if !strings.Contains(d.Message, "fired already") {
		t.Fatalf("a replay after the restart: %s", d.Message)
	}
	s.deliver(hook.ID, hook.Secret, now+1, body).want(t, 201)
	if lines := s.answered(2); len(lines) != 6 {
		t.Fatalf("two deliveries, two answers; the conversation:\n%s", strings.Join(lines, "\n"))
	}
}

// Bad deliveries spend the webhook's own budget for the sender's address,
// never the address's sign-in budget: behind a reverse proxy every member
// shares one address, and a misconfigured sender must not lock them out.
func TestBadWebhookDeliveriesSpendTheirOwnBudgetNotTheSignIns(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits.AuthFail = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	cfg.HTTP.RateLimits.Hook = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	s := newTriggerSetup(t, cfg)
	hook := s.create(nil)
	other := s.create(nil)
	now := time.Now().Unix()
	for range 3 {
		s.deliver(hook.ID, "wrong", now, "{}").wantErr(t, 401, "unauthorized")
	}
	for range 8 {
		s.deliver(hook.ID, "wrong", now, "{}").wantErr(t, 429, "rate_limited")
	}
	// Spent: even a good signature to that hook is not looked at from here.
	r := s.deliver(hook.ID, hook.Secret, now, "{}")
	r.wantErr(t, 429, "rate_limited")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// The address's sign-ins are untouched: its tokens work, a wrong one
	// is still checked (401, not 429), and so is another hook's delivery.
	s.h.call("GET", "/api/v1/auth/me", s.token, nil).want(t, 200)
	s.h.call("GET", "/api/v1/auth/me", "ags_wrong_token", nil).wantErr(t, 401, "unauthorized")
	s.deliver(other.ID, other.Secret, now, "{}").want(t, 201)
}

func TestAWorkflowTriggerStartsAnExecutionThatCompletes(t *testing.T) {
	t.Parallel()
	ws := newWorkflowSetup(t, testConfig(t))
	h, tok := ws.h, ws.token
	w := ws.create("ship", []map[string]any{ws.step("plan", "plan", "Plan it."), ws.step("build", "build", "Build it.")}, nil)
	var tr httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"name": "nightly", "kind": "cron", "schedule": "@daily", "target": "workflow",
		"workflow_id": w.ID, "session_id": ws.session, "brief": "Ship tonight's changes."}).want(t, 201).decode(t, &tr)

	var fired httpapi.FireView
	h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", tok, nil).want(t, 201).decode(t, &fired)
	if fired.Task == nil || fired.Task.Kind != domain.TaskWorkflow || fired.RunID != fired.Task.RunID {
		t.Fatalf("fired %+v", fired)
	}
	task, st := ws.ended(fired.Task.TaskID)
	if task.Status != domain.TaskCompleted || strings.Join(endings(st), ",") != "plan:completed,build:completed" {
		t.Fatalf("execution %s: %v", task.Status, endings(st))
	}
	var note *httpapi.EntryView
	for _, e := range h.messages(tok, ws.session, "") {
		if e.Display != nil && e.Display.Kind == "workflow_started" {
			note = &e
		}
	}
	if note == nil || note.Display.Extra["started_by"] != "nightly (cron)" || note.Display.Extra["brief"] != "Ship tonight's changes." {
		t.Fatalf("start note %+v", note)
	}
	if got := h.call("GET", "/api/v1/triggers/"+tr.ID, tok, nil).want(t, 200); !strings.Contains(string(got.Body), `"last_started_id":"`+fired.Task.TaskID+`"`) {
		t.Fatalf("trigger after the fire: %s", got.Body)
	}
	// The wake-up that reads the result is labelled by the start note: what
	// started, and who asked.
	waitFor(t, func() bool {
		var runs []httpapi.RunSummaryView
		h.call("GET", "/api/v1/sessions/"+ws.session+"/runs", tok, nil).want(t, 200).decode(t, &runs)
		return slices.ContainsFunc(runs, func(r httpapi.RunSummaryView) bool {
			return r.Question == "▶ ship (nightly (cron))" && r.Status == string(domain.RunCompleted)
		})
	})

	// Deleting the workflow deletes its triggers.
	h.call("DELETE", "/api/v1/workflows/"+w.ID, tok, nil).want(t, 204)
	h.call("GET", "/api/v1/triggers/"+tr.ID, tok, nil).wantErr(t, 404, "not_found")
}

func TestATriggerOnADeletedAgentStandsAndFailsWithTheReason(t *testing.T) {
	t.Parallel()
	s := newTriggerSetup(t, testConfig(t))
	other := s.h.createAgent(s.token, map[string]any{"name": "temp", "model": "tr-reporter"}).ID
	tr := s.create(map[string]any{"agent_config_id": other})
	s.h.call("DELETE", "/api/v1/agents/"+other, s.token, nil).want(t, 204)
	d := s.h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", s.token, nil).wantErr(t, 400, "validation")
	got := s.get(tr.ID)
	if !strings.Contains(d.Message, "no longer exists") || got.LastError != d.Message || got.LastStartedID != "" {
		t.Fatalf("fire on a deleted agent: %q; trigger %+v", d.Message, got)
	}
	// Re-pointed, it fires.
	s.h.call("PUT", "/api/v1/triggers/"+tr.ID, s.token, map[string]any{"target": "agent", "agent_config_id": s.agent,
		"session_id": s.session, "brief": "Again."}).want(t, 200)
	s.h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", s.token, nil).want(t, 201)
	s.answered(1)
	if got := s.get(tr.ID); got.LastError != "" || got.LastStartedID == "" {
		t.Fatalf("after re-pointing: %+v", got)
	}
}

func TestAWebhookSecretIsSealedAtRestAndStillSigns(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.SecretKey = newKey(t)
	s := newTriggerSetup(t, cfg)
	hook := s.create(nil)
	s.h.stop()
	if hits := filesContain(t, cfg.DataDir, hook.Secret); len(hits) > 0 {
		t.Fatalf("the webhook secret is stored in plaintext in %v", hits)
	}
	h2 := startServer(t, cfg)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	h2.call("POST", "/hooks/"+hook.ID, "", "{}", triggers.TimestampHeader, stamp,
		triggers.SignatureHeader, triggers.Sign(hook.Secret, stamp, []byte("{}"))).want(t, 201)
}

func TestDeletingAUserTakesTheirWorkflowsAndTriggersAlong(t *testing.T) {
	t.Parallel()
	ws := newWorkflowSetup(t, testConfig(t))
	h, tok := ws.h, ws.token
	w := ws.create("mine", []map[string]any{ws.step("plan", "plan", "Plan it.")}, nil)
	var tr httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "target": "workflow", "workflow_id": w.ID,
		"session_id": ws.session, "brief": "b"}).want(t, 201).decode(t, &tr)
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)

	h.call("DELETE", "/api/v1/auth/users/"+me.ID, h.admin, nil).want(t, 204)
	h.call("GET", "/api/v1/workflows/"+w.ID, h.admin, nil).wantErr(t, 404, "not_found")
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	h.call("POST", "/hooks/"+tr.ID, "", "{}", triggers.TimestampHeader, stamp,
		triggers.SignatureHeader, triggers.Sign(tr.Secret, stamp, []byte("{}"))).wantErr(t, 401, "unauthorized")
}

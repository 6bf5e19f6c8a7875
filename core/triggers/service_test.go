package triggers_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/ports"
)

// A spec is refused with every fault at once, each on its field.
func TestATriggerSpecIsCheckedWhole(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		child, err := h.sessions.CreateChild(ctx, h.chat, "a task's", h.agent.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			spec   triggers.Spec
			fields []string
		}{
			{"empty", triggers.Spec{}, []string{"kind", "brief", "target", "session_id"}},
			{"too long, bad schedule, unknown kind of target", triggers.Spec{Name: strings.Repeat("n", domain.MaxTriggerName+1), Kind: domain.TriggerCron,
				Schedule: "* * *", Target: "robot", SessionID: h.chat.ID, Brief: strings.Repeat("b", domain.MaxTriggerBrief+1)},
				[]string{"name", "schedule", "target", "brief"}},
			{"a webhook has no schedule", triggers.Spec{Kind: domain.TriggerWebhook, Schedule: "@daily", Target: domain.TargetWorkflow,
				SessionID: "nope", Brief: "b"}, []string{"schedule", "workflow_id", "session_id"}},
			{"unknown kind, workflow and agent", triggers.Spec{Kind: "email", Target: domain.TargetAgent, SessionID: child.ID, Brief: "b"},
				[]string{"kind", "agent_config_id", "session_id"}},
			{"missing ones", triggers.Spec{Kind: domain.TriggerWebhook, Target: domain.TargetWorkflow, WorkflowID: "nope", AgentConfigID: "x",
				SessionID: h.chat.ID, Brief: "b"}, []string{"workflow_id"}},
			{"another's agent", triggers.Spec{Kind: domain.TriggerWebhook, Target: domain.TargetAgent, AgentConfigID: "missing",
				SessionID: h.chat.ID, Brief: "b"}, []string{"agent_config_id"}},
		} {
			_, _, err := h.svc.Create(ctx, h.user, c.spec)
			fields := errs.FieldsOf(err)
			for _, f := range c.fields {
				if fields[f] == "" {
					t.Errorf("%s: no complaint about %s in %v", c.name, f, fields)
				}
			}
			if len(fields) != len(c.fields) {
				t.Errorf("%s: complaints %v, want only %v", c.name, fields, c.fields)
			}
		}
		if list, _ := h.svc.List(ctx, h.user, false); len(list) != 0 {
			t.Fatalf("refused specs stored %d triggers", len(list))
		}
	})
}

// A cron trigger is scheduled from now in the server's zone; a webhook's
// signing secret is handed out once, stored sealed. A person keeps at
// most MaxTriggersPerOwner.
func TestCreatingATrigger(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		cron, secret := h.create(h.agentSpec(domain.TriggerCron, " @hourly "))
		if secret != "" || cron.Schedule != "@hourly" || cron.NextFireAt == nil || !cron.NextFireAt.Equal(epoch.Add(30*time.Minute)) || !cron.Enabled {
			t.Fatalf("cron = %+v, secret %q", cron, secret)
		}
		hook, secret := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		if !strings.HasPrefix(secret, triggers.SecretPrefix) || len(secret) != len(triggers.SecretPrefix)+48 || hook.NextFireAt != nil {
			t.Fatalf("webhook = %+v, secret %q", hook, secret)
		}
		if stored := h.stored(hook.ID); stored.SealedSecret == "" || strings.Contains(stored.SealedSecret, secret[len(triggers.SecretPrefix):]) {
			t.Fatalf("stored secret = %q", stored.SealedSecret)
		}
		off := false
		spec := h.agentSpec(domain.TriggerCron, "0 9 * * 1")
		spec.Enabled = &off
		if tr, _ := h.create(spec); tr.Enabled || tr.NextFireAt != nil {
			t.Fatalf("a disabled cron trigger = %+v", tr)
		}
		for range domain.MaxTriggersPerOwner - 3 {
			h.create(h.agentSpec(domain.TriggerWebhook, ""))
		}
		_, _, err := h.svc.Create(t.Context(), h.user, h.agentSpec(domain.TriggerWebhook, ""))
		wantCode(t, err, errs.Conflict)
	})
}

// A person reads, edits and deletes their own triggers only; an admin
// lists and deletes anyone's.
func TestTriggersBelongToTheirOwner(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, _ := h.create(h.agentSpec(domain.TriggerCron, "@daily"))
		_, err := h.svc.Get(ctx, h.other, tr.ID)
		wantCode(t, err, errs.NotFound)
		_, err = h.svc.Update(ctx, h.other, tr.ID, h.agentSpec(domain.TriggerCron, "@daily"))
		wantCode(t, err, errs.NotFound)
		wantCode(t, h.svc.Delete(ctx, h.other, tr.ID), errs.NotFound)
		_, err = h.svc.Fire(ctx, h.other, tr.ID)
		wantCode(t, err, errs.NotFound)
		_, err = h.svc.List(ctx, h.user, true)
		wantCode(t, err, errs.Forbidden)
		if list, err := h.svc.List(ctx, h.admin, true); err != nil || len(list) != 1 {
			t.Fatalf("an admin's list = %+v, %v", list, err)
		}
		if list, _ := h.svc.List(ctx, h.other, false); len(list) != 0 {
			t.Fatalf("bob's list = %+v", list)
		}
		if err := h.svc.Delete(ctx, h.admin, tr.ID); err != nil {
			t.Fatalf("an admin's delete: %v", err)
		}
		_, err = h.svc.Get(ctx, h.user, tr.ID)
		wantCode(t, err, errs.NotFound)
	})
}

// An edit keeps the trigger's kind and reschedules a cron trigger from
// now; turning one off unschedules it.
func TestEditingATriggerReschedulesIt(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, _ := h.create(h.agentSpec(domain.TriggerCron, "@daily"))
		h.clock.Advance(2 * 24 * time.Hour)
		spec := h.agentSpec(domain.TriggerCron, "@hourly")
		spec.Kind = ""
		got, err := h.svc.Update(ctx, h.user, tr.ID, spec)
		if err != nil || got.Schedule != "@hourly" || !got.NextFireAt.Equal(epoch.Add(48*time.Hour+30*time.Minute)) || !got.UpdatedAt.Equal(h.clock.Now()) {
			t.Fatalf("update = %+v, %v", got, err)
		}
		off := false
		spec.Enabled = &off
		if got, err = h.svc.Update(ctx, h.user, tr.ID, spec); err != nil || got.Enabled || got.NextFireAt != nil {
			t.Fatalf("turned off = %+v, %v", got, err)
		}
		if stored := h.stored(tr.ID); stored.Enabled || stored.NextFireAt != nil {
			t.Fatalf("stored = %+v", stored)
		}
		_, err = h.svc.Update(ctx, h.user, tr.ID, h.agentSpec(domain.TriggerWebhook, ""))
		if errs.FieldsOf(err)["kind"] == "" {
			t.Fatalf("a change of kind: %v", err)
		}
		_, err = h.svc.Update(ctx, h.user, tr.ID, triggers.Spec{Kind: domain.TriggerCron})
		if errs.CodeOf(err) != errs.Validation {
			t.Fatalf("an empty spec: %v", err)
		}
	})
}

// Fire now starts the target as its owner: an agent's turn on the
// conversation, noted there, or a workflow execution, started by the
// trigger; the fire is recorded with what it started.
func TestFireNowStartsTheTarget(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, _ := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		h.clock.Advance(time.Minute)
		fired, err := h.svc.Fire(ctx, h.user, tr.ID)
		if err != nil || fired.Run == nil || fired.Task != nil {
			t.Fatalf("fire = %+v, %v", fired, err)
		}
		notes := h.notes(h.chat.ID, "trigger_fired")
		if len(notes) != 1 || notes[0].Text != `Trigger "nightly" asked helper.` || notes[0].Display.Extra["kind"] != "webhook" {
			t.Fatalf("notes = %+v", notes)
		}
		synctest.Wait()
		stored := h.stored(tr.ID)
		if stored.LastStartedID != fired.Run.ID || stored.LastError != "" || !stored.LastFiredAt.Equal(h.clock.Now()) {
			t.Fatalf("recorded = %+v", stored)
		}

		w, err := h.workflows.Create(ctx, h.user, domain.ScopePrivate, domain.WorkflowSpec{Name: "sweep", Description: "d",
			Steps: []domain.WorkflowStep{{Name: "only", Agent: h.agent.ID, Prompt: "go"}}})
		if err != nil {
			t.Fatal(err)
		}
		spec := h.agentSpec(domain.TriggerCron, "@daily")
		spec.Target, spec.WorkflowID, spec.AgentConfigID = domain.TargetWorkflow, w.ID, ""
		wt, _ := h.create(spec)
		if fired, err = h.svc.Fire(ctx, h.user, wt.ID); err != nil || fired.Task == nil || fired.Task.Kind != domain.TaskWorkflow {
			t.Fatalf("a workflow's fire = %+v, %v", fired, err)
		}
		started := h.notes(h.chat.ID, "workflow_started")
		if len(started) != 1 || started[0].Display.Extra["started_by"] != "nightly (cron)" || started[0].Display.Extra["trigger_id"] != wt.ID {
			t.Fatalf("the start's note = %+v", started)
		}
		if got := h.stored(wt.ID).LastStartedID; got != fired.Task.ID {
			t.Fatalf("last started = %q", got)
		}
	})
}

// A fire that starts nothing says why — to the caller and as the
// trigger's last_error: disabled, a busy conversation, a workflow the
// owner may no longer use, a disabled owner.
func TestARefusedFireIsRecorded(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		off := false
		spec := h.agentSpec(domain.TriggerWebhook, "")
		spec.Enabled = &off
		disabled, _ := h.create(spec)
		_, err := h.svc.Fire(ctx, h.user, disabled.ID)
		wantCode(t, err, errs.Conflict)

		tr, _ := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		h.busy()
		_, err = h.svc.Fire(ctx, h.user, tr.ID)
		wantCode(t, err, errs.Conflict)
		if stored := h.stored(tr.ID); stored.LastError != errs.MessageOf(err) || stored.LastStartedID != "" || stored.LastFiredAt == nil {
			t.Fatalf("recorded = %+v", stored)
		}

		w, err := h.workflows.Create(ctx, h.user, domain.ScopePrivate, domain.WorkflowSpec{Name: "gone", Description: "d",
			Steps: []domain.WorkflowStep{{Name: "only", Agent: h.agent.ID, Prompt: "go"}}})
		if err != nil {
			t.Fatal(err)
		}
		wspec := h.agentSpec(domain.TriggerWebhook, "")
		wspec.Target, wspec.WorkflowID = domain.TargetWorkflow, w.ID
		wt, _ := h.create(wspec)
		if err := h.workflows.Delete(ctx, h.user, w.ID); err != nil {
			t.Fatal(err)
		}
		_, err = h.svc.Fire(ctx, h.user, wt.ID)
		if errs.FieldsOf(err)["workflow_id"] == "" || !strings.Contains(h.stored(wt.ID).LastError, "no longer one its owner may use") {
			t.Fatalf("a gone workflow: %v, recorded %q", err, h.stored(wt.ID).LastError)
		}

		if _, err := h.users.UpdateUser(ctx, h.user.User.ID, func(u *domain.User, _ int) error { u.Disabled = true; return nil }); err != nil {
			t.Fatal(err)
		}
		_, err = h.svc.Fire(ctx, h.user, tr.ID)
		wantCode(t, err, errs.Conflict)
		if h.stored(tr.ID).LastError != "the trigger's owner is disabled" {
			t.Fatalf("recorded = %q", h.stored(tr.ID).LastError)
		}
	})
}

// Tick fires each due cron trigger once however often it looks, and once
// for a clock that jumped past several ticks; SkipMissed moves ticks
// missed while down past now without firing them.
func TestCronTicksFireOnce(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, _ := h.create(h.agentSpec(domain.TriggerCron, "@hourly")) // due at 10:00
		fires := func() int {
			synctest.Wait() // the fired turns end
			return len(h.notes(h.chat.ID, "trigger_fired"))
		}
		h.svc.Tick(ctx)
		if fires() != 0 {
			t.Fatal("a tick fired before it was due")
		}
		h.clock.Advance(30 * time.Minute)
		h.svc.Tick(ctx)
		h.svc.Tick(ctx)
		if fires() != 1 || !h.stored(tr.ID).NextFireAt.Equal(epoch.Add(90*time.Minute)) {
			t.Fatalf("%d fires, next at %v", fires(), h.stored(tr.ID).NextFireAt)
		}
		h.clock.Advance(5 * time.Hour) // past five ticks
		h.svc.Tick(ctx)
		if fires() != 2 || !h.stored(tr.ID).NextFireAt.Equal(epoch.Add(6*time.Hour+30*time.Minute)) {
			t.Fatalf("%d fires after a jump, next at %v", fires(), h.stored(tr.ID).NextFireAt)
		}
		h.clock.Advance(3 * time.Hour)
		if err := h.svc.SkipMissed(ctx); err != nil {
			t.Fatal(err)
		}
		h.svc.Tick(ctx)
		if fires() != 2 || !h.stored(tr.ID).NextFireAt.Equal(epoch.Add(9*time.Hour+30*time.Minute)) {
			t.Fatalf("%d fires after a restart, next at %v", fires(), h.stored(tr.ID).NextFireAt)
		}
		// A schedule that no longer reads (stored by an older version) is
		// left for its author to fix: never claimed, never fired.
		broken := h.stored(tr.ID)
		broken.Schedule = "every full moon"
		if err := h.store.UpdateTrigger(ctx, broken); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Hour)
		h.svc.Tick(ctx)
		if fires() != 2 || !h.stored(tr.ID).NextFireAt.Equal(*broken.NextFireAt) {
			t.Fatalf("a broken schedule: %d fires, next at %v", fires(), h.stored(tr.ID).NextFireAt)
		}
	})
}

// A webhook delivery fires its trigger once: signed with its secret,
// within the window, of a bounded body without NUL bytes; the body comes
// to the run as data after the brief. An unknown trigger or a cron one
// answers as a bad signature. A delivery refused before anything started
// may be resent.
func TestAWebhookDeliveryFiresOnce(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, secret := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		cron, _ := h.create(h.agentSpec(domain.TriggerCron, "@daily"))
		ts := fmt.Sprint(h.clock.Now().Unix())
		body := []byte(`{"event":"push"}`)
		deliver := func(id string, body []byte) error {
			_, err := h.svc.Deliver(ctx, id, ts, triggers.Sign(secret, ts, body), body)
			return err
		}
		wantCode(t, deliver("unknown", body), errs.Unauthorized)
		wantCode(t, deliver(cron.ID, body), errs.Unauthorized)
		_, err := h.svc.Deliver(ctx, tr.ID, ts, triggers.Sign("ags_wh_wrong", ts, body), body)
		wantCode(t, err, errs.Unauthorized)
		wantCode(t, deliver(tr.ID, make([]byte, domain.MaxHookBody+1)), errs.Validation)
		if err := deliver(tr.ID, []byte("a\x00b")); errs.FieldsOf(err)["body"] == "" {
			t.Fatalf("a NUL byte: %v", err)
		}

		run := h.busy()
		wantCode(t, deliver(tr.ID, body), errs.Conflict)
		if err := h.runs.StopRun(ctx, run.ID, "stopped"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := deliver(tr.ID, body); err != nil {
			t.Fatalf("a resend after a refusal: %v", err)
		}
		err = deliver(tr.ID, body)
		wantCode(t, err, errs.Conflict)
		if !strings.Contains(errs.MessageOf(err), "fired already") {
			t.Fatalf("a replay: %v", err)
		}
		var input string
		for _, e := range h.entries(h.chat.ID) {
			if it := domain.ParseItem(e.Item); e.Kind == domain.KindItem && it.Role == "user" && strings.Contains(it.Text(), "push") {
				input = it.Text()
			}
		}
		if !strings.HasPrefix(input, "check the inbox\n\n<external source=\"trigger\">\n{\"event\":\"push\"}\n</external>\n") {
			t.Fatalf("the run was told %q", input)
		}
		if n, err := h.svc.PruneDeliveries(ctx); err != nil || n != 0 {
			t.Fatalf("an early prune = %d, %v", n, err)
		}
		h.clock.Advance(2*domain.HookWindow + time.Second)
		if n, err := h.svc.PruneDeliveries(ctx); err != nil || n != 1 {
			t.Fatalf("prune = %d, %v", n, err)
		}

		spec := h.agentSpec(domain.TriggerWebhook, "")
		off := false
		spec.Enabled = &off
		if _, err := h.svc.Update(ctx, h.user, tr.ID, spec); err != nil {
			t.Fatal(err)
		}
		ts = fmt.Sprint(h.clock.Now().Unix())
		wantCode(t, deliver(tr.ID, []byte("later")), errs.Conflict)
	})
}

// A rotated secret signs from then on; the old one stops at once. A cron
// trigger has no secret to rotate.
func TestRotatingAWebhookSecret(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, old := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		_, fresh, err := h.svc.RotateSecret(ctx, h.user, tr.ID)
		if err != nil || fresh == old || !strings.HasPrefix(fresh, triggers.SecretPrefix) {
			t.Fatalf("rotate = %q, %v", fresh, err)
		}
		ts := fmt.Sprint(h.clock.Now().Unix())
		_, err = h.svc.Deliver(ctx, tr.ID, ts, triggers.Sign(old, ts, []byte("x")), []byte("x"))
		wantCode(t, err, errs.Unauthorized)
		if _, err := h.svc.Deliver(ctx, tr.ID, ts, triggers.Sign(fresh, ts, []byte("x")), []byte("x")); err != nil {
			t.Fatalf("the new secret: %v", err)
		}
		cron, _ := h.create(h.agentSpec(domain.TriggerCron, "@daily"))
		_, _, err = h.svc.RotateSecret(ctx, h.user, cron.ID)
		wantCode(t, err, errs.Validation)
		_, _, err = h.svc.RotateSecret(ctx, h.other, tr.ID)
		wantCode(t, err, errs.NotFound)
	})
}

// An agent trigger whose agent is gone is refused naming the field, and
// one that reports into a conversation waiting on an approval is refused
// rather than setting the pause aside.
func TestAnAgentTriggerIsRefusedWhereItCannotReport(t *testing.T) {
	bubble(t, func(t *testing.T, h *harness) {
		ctx := t.Context()
		tr, _ := h.create(h.agentSpec(domain.TriggerWebhook, ""))
		gone := domain.Agent{ID: h.ids.NewID(), Ownership: h.agent.Ownership, AgentSpec: domain.AgentSpec{Name: "gone", Model: "m",
			ProviderID: h.agent.ProviderID}, CreatedAt: epoch, UpdatedAt: epoch}
		if err := h.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, gone) }); err != nil {
			t.Fatal(err)
		}
		spec := h.agentSpec(domain.TriggerWebhook, "")
		spec.AgentConfigID = gone.ID
		orphan, _ := h.create(spec)
		if err := h.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, gone.ID) }); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.Fire(ctx, h.user, orphan.ID); errs.FieldsOf(err)["agent_config_id"] == "" {
			t.Fatalf("a trigger whose agent is gone: %v", err)
		}
		// A conversation paused on an approval refuses the trigger's turn.
		paused := domain.Run{ID: "paused", SessionID: h.chat.ID, OwnerID: h.user.User.ID, Status: domain.RunRunning,
			CreatedAt: epoch, UpdatedAt: epoch}
		if err := h.runStore.CreateRun(ctx, paused); err != nil {
			t.Fatal(err)
		}
		if err := h.runStore.FileApprovals(ctx, []domain.Approval{{ID: h.ids.NewID(), SessionID: h.chat.ID, RunID: paused.ID,
			OwnerID: h.user.User.ID, ToolCallID: "c1", ToolName: "exec_command", CreatedAt: epoch}}, paused, domain.PauseState{}); err != nil {
			t.Fatal(err)
		}
		_, err := h.svc.Fire(ctx, h.user, tr.ID)
		if errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.MessageOf(err), "waits on an approval") {
			t.Fatalf("a trigger over a pause: %v", err)
		}
	})
}

package triggers

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/ports"
)

// Fire starts a trigger's target now, as its owner asked (fire now).
// Returns what it started, or validation (the target is no longer usable),
// conflict (disabled, the conversation busy or at its task cap) or
// unavailable (draining) — the refusal also becomes the trigger's
// last_error.
func (s *Service) Fire(ctx context.Context, p domain.Principal, id string) (domain.Fired, error) {
	t, err := s.Get(ctx, p, id)
	if err != nil {
		return domain.Fired{}, err
	}
	if !t.Enabled {
		return domain.Fired{}, errs.E(errs.Conflict, "the trigger is disabled: enable it to fire it")
	}
	return s.fire(ctx, t, t.Brief, "fire now")
}

// Deliver takes a webhook delivery: the trigger's signature check, the
// replay guard, then the fire, with the body appended to the brief as an
// external payload. A delivery that fired is remembered for the window in
// the store every replica shares, so the same one again is refused
// (conflict) by any replica, before or after a restart; one refused before
// anything started may be resent. Returns unauthorized for a trigger that
// is not a webhook or a bad signature or timestamp (the caller spends the
// webhook budget of the trigger and address), validation for a body over
// domain.MaxHookBody or one holding a NUL byte, and what Fire returns.
func (s *Service) Deliver(ctx context.Context, id, timestamp, signature string, body []byte) (fired domain.Fired, err error) {
	who := ports.ActorOf(ctx)
	who.Kind, who.ID = domain.ActorWebhook, id
	ctx = ports.WithActor(ctx, who)
	name := ""
	defer func() {
		// A delivery turned away is recorded; one whose run failed to
		// start is the fire's record.
		if err != nil && s.d.Refusals != nil && fired.StartedID() == "" && errs.CodeOf(err) != errs.Internal {
			if rerr := s.d.Refusals.Refused(context.WithoutCancel(ctx), "webhook.deliver", audit.Object{Kind: "trigger", ID: id, Name: name},
				"", errs.MessageOf(err)); rerr != nil {
				s.d.Log.Warn("recording a refused webhook delivery failed", "trigger_id", id, "err", rerr)
			}
		}
	}()
	t, err := s.d.Store.FindTrigger(ctx, id)
	name = t.Name
	if errs.Is(err, errs.NotFound) || (err == nil && t.Kind != domain.TriggerWebhook) {
		// An unknown id answers as a bad signature: the hook URL is the
		// only thing a stranger holds, and it tells them nothing.
		return domain.Fired{}, errs.E(errs.Unauthorized, "the signature does not match")
	}
	if err != nil {
		return domain.Fired{}, err
	}
	secret, err := s.d.Box.Open(secretPlace(t.ID), t.SealedSecret)
	if err != nil {
		return domain.Fired{}, err
	}
	now := s.d.Clock.Now()
	if err := Verify(secret, timestamp, signature, body, now); err != nil {
		return domain.Fired{}, err
	}
	if len(body) > domain.MaxHookBody {
		return domain.Fired{}, errs.E(errs.Validation, "the body is %d bytes: a delivery carries at most %d", len(body), domain.MaxHookBody)
	}
	// The body becomes part of the run's input, text no store keeps alike
	// with a NUL character in it.
	if bytes.IndexByte(body, 0) >= 0 {
		return domain.Fired{}, errs.Field("body", domain.NULMessage)
	}
	if !t.Enabled {
		return domain.Fired{}, errs.E(errs.Conflict, "the trigger is disabled")
	}
	d := delivery(t.ID, timestamp, body, now)
	if err := s.d.Deliveries.HoldDelivery(ctx, d, now); errs.Is(err, errs.Conflict) {
		return domain.Fired{}, errs.E(errs.Conflict, "this delivery (the same timestamp and body) fired already: send a new timestamp for another run")
	} else if err != nil {
		return domain.Fired{}, err
	}
	fired, err = s.fire(ctx, t, withPayload(t.Brief, body), "webhook")
	if err != nil {
		s.release(ctx, d)
	}
	return fired, err
}

// fire starts t's target as its owner, led by input, and records how it
// went: the refusal as last_error, or what it started.
func (s *Service) fire(ctx context.Context, t domain.Trigger, input, how string) (domain.Fired, error) {
	fired, err := s.start(ctx, t, input)
	lastErr := ""
	if err != nil {
		lastErr = errs.MessageOf(err)
	}
	at := s.d.Clock.Now()
	// The fire is recorded with how it went, in the audit log with it.
	actx, rec := audit.Stage(context.WithoutCancel(ctx), at, "trigger.fire", audit.Object{Kind: "trigger", ID: t.ID, Name: t.Name})
	rec.Method = how
	if lastErr != "" {
		rec.Outcome, rec.Reason = domain.AuditFailure, errs.Short(lastErr)
	}
	if rerr := s.d.Store.RecordFire(actx, t.ID, at, lastErr, fired.StartedID()); rerr != nil {
		s.d.Log.Warn("recording a trigger's fire failed", "trigger_id", t.ID, "err", rerr)
	}
	return fired, err
}

// start fires the target as the trigger's owner.
func (s *Service) start(ctx context.Context, t domain.Trigger, input string) (domain.Fired, error) {
	owner, err := s.d.Users.FindUserByID(ctx, t.OwnerID)
	if err != nil {
		return domain.Fired{}, err
	}
	if owner.Disabled {
		return domain.Fired{}, errs.E(errs.Conflict, "the trigger's owner is disabled")
	}
	if s.d.Budgets != nil {
		if err := s.d.Budgets(ctx, owner.ID, t.AgentConfigID); err != nil {
			return domain.Fired{}, err
		}
	}
	p := domain.Principal{User: owner}
	switch t.Target {
	case domain.TargetWorkflow:
		task, err := s.d.Starter.StartWorkflow(ctx, p, tasks.WorkflowStart{WorkflowID: t.WorkflowID, SessionID: t.SessionID,
			Input: input, StartedBy: startedBy(t), TriggerID: t.ID})
		if errs.Is(err, errs.NotFound) {
			// The session or workflow would have taken the trigger with it:
			// what is gone is the owner's right to use the workflow.
			return domain.Fired{}, errs.Field("workflow_id", "the trigger's workflow is no longer one its owner may use")
		}
		if err != nil {
			return domain.Fired{}, err
		}
		return domain.Fired{Task: &task}, nil
	default:
		run, err := s.askAgent(ctx, p, t, input)
		if err != nil {
			return domain.Fired{}, err
		}
		return domain.Fired{Run: &run}, nil
	}
}

// askAgent sends a trigger's brief as a message of the owner's
// conversation, answered by the trigger's agent under the conversation's
// own sandbox binding, after a note saying which trigger asked. Unlike a
// person's message it abandons nothing: a conversation busy with a run, or
// waiting on an approval, refuses it. Its run uses only the grants made
// within it. Returns not_found (session), validation (the agent is gone or
// no longer the owner's to use), conflict (busy, paused, a task's
// conversation), rate_limited (max_runs_per_user) or unavailable
// (draining).
func (s *Service) askAgent(ctx context.Context, p domain.Principal, t domain.Trigger, input string) (domain.Run, error) {
	sess, err := s.d.Sessions.Get(ctx, p, t.SessionID)
	if err != nil {
		return domain.Run{}, err
	}
	if sess.IsTaskSession() {
		return domain.Run{}, errs.E(errs.Conflict, "this is a background task's conversation: a trigger reports into a conversation of its own")
	}
	if strings.TrimSpace(input) == "" {
		return domain.Run{}, errs.Field("brief", "is required: it is the message the agent answers")
	}
	a, err := s.d.Config.FindAgent(ctx, t.AgentConfigID)
	if errs.Is(err, errs.NotFound) || (err == nil && !a.VisibleTo(p)) {
		return domain.Run{}, errs.Field("agent_config_id", "the trigger's agent no longer exists (or is no longer shared): point the trigger at another")
	}
	if err != nil {
		return domain.Run{}, err
	}
	note := domain.Entry{Kind: domain.KindAnnotation, Text: fmt.Sprintf("Trigger %q asked %s.", t.Label(), a.Name),
		Display: &domain.Display{Kind: "trigger_fired", Title: t.Label(), Summary: a.Name,
			Extra: map[string]string{"trigger_id": t.ID, "trigger": t.Label(), "kind": string(t.Kind),
				"agent_config_id": t.AgentConfigID, "agent": a.Name}}}
	return s.d.Starter.StartBackground(ctx, runs.BackgroundStart{SessionID: sess.ID, OwnerID: p.User.ID, AgentConfigID: a.ID,
		Input: input, Note: &note, Title: true, NotPaused: true, Triggered: true})
}

// startedBy names a trigger in a workflow's start note: "cron @daily",
// "webhook", or its name with the kind.
func startedBy(t domain.Trigger) string {
	if t.Name == "" {
		return t.Label()
	}
	return fmt.Sprintf("%s (%s)", t.Name, t.Kind)
}

// Tick fires the cron triggers due at now: each due tick is claimed (its
// next fire time moved past now) before it fires, so a tick fires once
// however often it is looked at, and a clock that jumped past several ticks
// fires once, not once per tick missed.
func (s *Service) Tick(ctx context.Context) {
	now := s.d.Clock.Now()
	due, err := s.d.Store.CronTriggers(ctx, &now)
	if err != nil {
		if ctx.Err() == nil {
			s.d.Log.Warn("reading due triggers failed", "err", err)
		}
		return
	}
	for _, t := range due {
		if won := s.claim(ctx, t, now); won {
			_, _ = s.fire(ports.WithActor(ctx, domain.Actor{Kind: domain.ActorTrigger, ID: t.ID, Name: t.Label()}), t, t.Brief, "cron")
		}
	}
}

// claim moves t's next tick past now; false when another claim won or the
// schedule no longer reads (the trigger is left for its author to fix).
func (s *Service) claim(ctx context.Context, t domain.Trigger, now time.Time) bool {
	if t.NextFireAt == nil {
		return false
	}
	sched, err := ParseSchedule(t.Schedule)
	if err != nil {
		s.d.Log.Warn("a cron trigger's schedule no longer reads", "trigger_id", t.ID, "err", err)
		return false
	}
	next, err := sched.Next(now, s.d.Location)
	if err != nil {
		s.d.Log.Warn("a cron trigger's schedule never comes due", "trigger_id", t.ID, "err", err)
		return false
	}
	won, err := s.d.Store.ClaimTick(ctx, t.ID, *t.NextFireAt, next)
	if err != nil {
		s.d.Log.Warn("claiming a trigger's tick failed", "trigger_id", t.ID, "err", err)
	}
	return won
}

// SkipMissed moves every cron trigger whose tick passed while the process
// was down to its next tick from now, firing none: missed ticks are not
// replayed. Run once at start, before the first Tick.
func (s *Service) SkipMissed(ctx context.Context) error {
	now := s.d.Clock.Now()
	all, err := s.d.Store.CronTriggers(ctx, &now)
	if err != nil {
		return err
	}
	for _, t := range all {
		s.claim(ctx, t, now)
	}
	return nil
}

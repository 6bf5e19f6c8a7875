// Package triggers starts work with nobody at the keyboard: a cron schedule
// or a signed webhook delivery starts a workflow execution, or an agent's
// turn, in the conversation the trigger reports into.
package triggers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/ports"
)

// SecretPrefix begins every webhook secret, so one is recognisable in a
// config file or a leak scanner.
const SecretPrefix = "ags_wh_"

// Sessions reads the owner's conversations.
type Sessions interface {
	Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error)
}

// Workflows reads the workflows a person may use.
type Workflows interface {
	Get(ctx context.Context, p domain.Principal, id string) (domain.Workflow, error)
}

// Starter starts what a trigger fires: a workflow execution (the start
// POST /workflows/:id/runs makes) or an agent's turn on the brief.
type Starter interface {
	StartWorkflow(ctx context.Context, p domain.Principal, req tasks.WorkflowStart) (domain.Task, error)
	StartBackground(ctx context.Context, req runs.BackgroundStart) (domain.Run, error)
}

// Deps are what the service needs.
type Deps struct {
	Store     ports.TriggerStore
	Users     ports.UserStore
	Config    ports.ConfigReader
	Sessions  Sessions
	Workflows Workflows
	Starter   Starter
	Box       *secrets.Box
	IDs       ports.IDs
	Clock     ports.Clock
	// Location is the time zone schedules are read in (the server's).
	Location *time.Location
	Log      *slog.Logger

	// Deliveries keeps the webhook deliveries that fired: the replay
	// guard, shared by every replica.
	Deliveries ports.HookDeliveryStore
	// Refusals records the webhook deliveries turned away in the audit
	// log; nil records none (a program without one).
	Refusals Refusals
	// Budgets refuses a fire its owner's usage budgets (or, for an agent
	// target, the agent's) have no room for: the fire starts nothing and
	// the refusal is its last_error. nil checks none.
	Budgets func(ctx context.Context, ownerID, agentID string) error
}

// Refusals records an action refused before it changed anything.
type Refusals interface {
	Refused(ctx context.Context, action string, obj audit.Object, method, reason string) error
}

// Service keeps triggers and fires them.
type Service struct {
	d Deps
}

// New returns a Service.
func New(d Deps) *Service {
	if d.Location == nil {
		d.Location = time.Local
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	return &Service{d: d}
}

// Spec is a trigger as its author writes it; Enabled nil keeps what is
// stored (on by default).
type Spec struct {
	Name          string
	Kind          domain.TriggerKind
	Schedule      string
	Target        domain.TriggerTarget
	WorkflowID    string
	AgentConfigID string
	SessionID     string
	Brief         string
	Enabled       *bool
}

func secretPlace(id string) string { return secrets.Place("triggers", "secret", id) }

// List returns the caller's triggers, newest first; all (admins only)
// lists everyone's, for administering (an admin may delete, never edit or
// fire, another person's trigger). Returns forbidden.
func (s *Service) List(ctx context.Context, p domain.Principal, all bool) ([]domain.Trigger, error) {
	if all {
		if err := p.RequireAdmin(); err != nil {
			return nil, err
		}
		return s.d.Store.ListTriggers(ctx, "")
	}
	return s.d.Store.ListTriggers(ctx, p.User.ID)
}

// Get returns one of the caller's triggers; anyone else's is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Trigger, error) {
	t, err := s.d.Store.FindTrigger(ctx, id)
	if err == nil && t.OwnerID != p.User.ID {
		err = errs.E(errs.NotFound, "trigger not found")
	}
	return t, err
}

// Create adds a trigger of the caller's. A webhook's signing secret is
// returned here and never again. Returns validation (with the fields at
// fault) or conflict (the caller keeps domain.MaxTriggersPerOwner).
func (s *Service) Create(ctx context.Context, p domain.Principal, spec Spec) (domain.Trigger, string, error) {
	now := s.d.Clock.Now()
	t := domain.Trigger{ID: s.d.IDs.NewID(), OwnerID: p.User.ID, CreatedAt: now, UpdatedAt: now}
	t.Enabled = true
	if err := s.apply(ctx, p, &t, spec, true); err != nil {
		return domain.Trigger{}, "", err
	}
	secret := ""
	if t.Kind == domain.TriggerWebhook {
		var err error
		if secret, t.SealedSecret, err = s.mint(t.ID); err != nil {
			return domain.Trigger{}, "", err
		}
	}
	actx := audit.Change(ctx, now, "trigger.create", audit.Object{Kind: "trigger", ID: t.ID, Name: t.Name}, audit.Diff(nil, t)...)
	if err := s.d.Store.InsertTrigger(actx, t, domain.MaxTriggersPerOwner); err != nil {
		return domain.Trigger{}, "", err
	}
	return t, secret, nil
}

// Update replaces a trigger's spec (its kind stays). Turning a cron trigger
// on, or changing its schedule, schedules its next tick from now.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, spec Spec) (domain.Trigger, error) {
	t, err := s.Get(ctx, p, id)
	if err != nil {
		return t, err
	}
	if spec.Kind != "" && spec.Kind != t.Kind {
		return t, errs.Field("kind", "a trigger's kind stays what it was created as: delete it and create a %s trigger", spec.Kind)
	}
	spec.Kind = t.Kind
	before := t
	if err := s.apply(ctx, p, &t, spec, false); err != nil {
		return domain.Trigger{}, err
	}
	t.UpdatedAt = s.d.Clock.Now()
	actx := audit.Change(ctx, t.UpdatedAt, "trigger.update", audit.Object{Kind: "trigger", ID: t.ID, Name: t.Name}, audit.Diff(before, t)...)
	return t, s.d.Store.UpdateTrigger(actx, t)
}

// Delete removes one of the caller's triggers, or anyone's for an admin.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	t, err := s.Get(ctx, p, id)
	if err != nil && (!p.IsAdmin() || !errs.Is(err, errs.NotFound)) {
		return err
	}
	return s.d.Store.DeleteTrigger(audit.Change(ctx, s.d.Clock.Now(), "trigger.delete", audit.Object{Kind: "trigger", ID: id, Name: t.Name}), id)
}

// RotateSecret mints a webhook trigger a new signing secret, returned once;
// the old one stops working at once. Returns validation for a cron trigger.
func (s *Service) RotateSecret(ctx context.Context, p domain.Principal, id string) (domain.Trigger, string, error) {
	t, err := s.Get(ctx, p, id)
	if err != nil {
		return t, "", err
	}
	if t.Kind != domain.TriggerWebhook {
		return t, "", errs.E(errs.Validation, "only a webhook trigger has a secret to rotate")
	}
	secret, sealed, err := s.mint(t.ID)
	if err != nil {
		return t, "", err
	}
	t.SealedSecret, t.UpdatedAt = sealed, s.d.Clock.Now()
	actx := audit.Change(ctx, t.UpdatedAt, "trigger.rotate_secret", audit.Object{Kind: "trigger", ID: t.ID, Name: t.Name}, "secret")
	return t, secret, s.d.Store.UpdateTrigger(actx, t)
}

// mint makes a new signing secret and its stored form.
func (s *Service) mint(id string) (secret, sealed string, err error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "mint a webhook secret")
	}
	secret = SecretPrefix + hex.EncodeToString(b)
	sealed, err = s.d.Box.Seal(secretPlace(id), secret)
	return secret, sealed, err
}

// apply validates spec and writes it onto t, every fault at once.
func (s *Service) apply(ctx context.Context, p domain.Principal, t *domain.Trigger, spec Spec, create bool) error {
	var f errs.FieldErrors
	name := strings.TrimSpace(spec.Name)
	if utf8.RuneCountInString(name) > domain.MaxTriggerName {
		f.Add("name", "is longer than %d characters", domain.MaxTriggerName)
	}
	brief := strings.TrimSpace(spec.Brief)
	switch {
	case brief == "":
		f.Add("brief", "is required: it is what the started work is asked to do (a webhook's body is added to it)")
	case len(brief) > domain.MaxTriggerBrief:
		f.Add("brief", "is longer than %d bytes", domain.MaxTriggerBrief)
	}
	var sched Schedule
	switch spec.Kind {
	case domain.TriggerCron:
		var err error
		if sched, err = ParseSchedule(spec.Schedule); err != nil {
			if err := f.Merge("", err); err != nil {
				return err
			}
		}
	case domain.TriggerWebhook:
		if strings.TrimSpace(spec.Schedule) != "" {
			f.Add("schedule", "only a cron trigger has a schedule: a webhook fires when a delivery arrives")
		}
	case "":
		if create {
			f.Add("kind", "is required: cron or webhook")
		}
	default:
		f.Add("kind", "must be cron or webhook")
	}
	if err := s.checkTarget(ctx, p, spec, &f); err != nil {
		return err
	}
	if err := s.checkSession(ctx, p, spec.SessionID, &f); err != nil {
		return err
	}
	if err := f.Err(); err != nil {
		return err
	}
	t.Name, t.Kind, t.Target, t.SessionID, t.Brief = name, spec.Kind, spec.Target, spec.SessionID, brief
	t.Schedule, t.WorkflowID, t.AgentConfigID = "", "", ""
	if spec.Kind == domain.TriggerCron {
		t.Schedule = strings.TrimSpace(spec.Schedule)
	}
	if spec.Target == domain.TargetWorkflow {
		t.WorkflowID = spec.WorkflowID
	} else {
		t.AgentConfigID = spec.AgentConfigID
	}
	if spec.Enabled != nil {
		t.Enabled = *spec.Enabled
	}
	t.NextFireAt = nil
	if t.Kind == domain.TriggerCron && t.Enabled {
		next, err := sched.Next(s.d.Clock.Now(), s.d.Location)
		if err != nil {
			return errs.Field("schedule", "never comes due")
		}
		t.NextFireAt = &next
	}
	return nil
}

// checkTarget adds the faults of the target: a workflow or an agent the
// owner may use.
func (s *Service) checkTarget(ctx context.Context, p domain.Principal, spec Spec, f *errs.FieldErrors) error {
	switch spec.Target {
	case domain.TargetWorkflow:
		if spec.WorkflowID == "" {
			f.Add("workflow_id", "is required for a workflow target")
			return nil
		}
		if _, err := s.d.Workflows.Get(ctx, p, spec.WorkflowID); errs.Is(err, errs.NotFound) {
			f.Add("workflow_id", "no such workflow")
		} else if err != nil {
			return err
		}
	case domain.TargetAgent:
		if spec.AgentConfigID == "" {
			f.Add("agent_config_id", "is required for an agent target")
			return nil
		}
		a, err := s.d.Config.FindAgent(ctx, spec.AgentConfigID)
		if errs.Is(err, errs.NotFound) || (err == nil && !a.VisibleTo(p)) {
			f.Add("agent_config_id", "no such agent")
		} else if err != nil {
			return err
		}
	case "":
		f.Add("target", "is required: workflow or agent")
	default:
		f.Add("target", "must be workflow or agent")
	}
	return nil
}

// checkSession adds the fault of the conversation the trigger reports into:
// one of the owner's own, not a background task's.
func (s *Service) checkSession(ctx context.Context, p domain.Principal, id string, f *errs.FieldErrors) error {
	if id == "" {
		f.Add("session_id", "is required: the conversation the trigger's work reports into")
		return nil
	}
	sess, err := s.d.Sessions.Get(ctx, p, id)
	switch {
	case errs.Is(err, errs.NotFound):
		f.Add("session_id", "no such conversation")
	case err != nil:
		return err
	case sess.IsTaskSession():
		f.Add("session_id", "is a background task's conversation: a trigger reports into a conversation of its own")
	}
	return nil
}

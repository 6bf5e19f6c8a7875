package domain

import "time"

// Trigger bounds: how many triggers one person may keep, how large a
// webhook delivery may be, and how far a delivery's timestamp may stray
// from the server's clock (also how long a fired delivery is remembered
// against replays).
const (
	MaxTriggersPerOwner = 50
	MaxHookBody         = 64 << 10
	HookWindow          = 5 * time.Minute
	// MaxTriggerBrief bounds the brief a trigger's author writes.
	MaxTriggerBrief = 32 << 10
	// MaxTriggerName bounds a trigger's name.
	MaxTriggerName = 200
)

// TriggerKind says what fires a trigger.
type TriggerKind string

// The kinds: a schedule, or a signed delivery to /hooks/:id.
const (
	TriggerCron    TriggerKind = "cron"
	TriggerWebhook TriggerKind = "webhook"
)

// Values lists the kinds.
func (TriggerKind) Values() []string { return []string{string(TriggerCron), string(TriggerWebhook)} }

// TriggerTarget says what a trigger starts.
type TriggerTarget string

// The targets: a workflow execution into the trigger's session, or the
// brief sent as a message of that session, answered by an agent.
const (
	TargetWorkflow TriggerTarget = "workflow"
	TargetAgent    TriggerTarget = "agent"
)

// Values lists the targets.
func (TriggerTarget) Values() []string { return []string{string(TargetWorkflow), string(TargetAgent)} }

// Trigger starts work with nobody at the keyboard: on a schedule or on a
// signed webhook delivery, it starts its target into its session, led by
// the brief its author wrote in advance. It is session content: its owner
// is the session's, and nobody else reads it.
type Trigger struct {
	ID      string
	OwnerID string
	TriggerSpec
	// SealedSecret is the webhook's signing secret as stored (sealed when
	// the server has a key); empty for cron.
	SealedSecret string
	// NextFireAt is a cron trigger's next tick while it is enabled.
	NextFireAt    *time.Time
	LastFiredAt   *time.Time
	LastError     string
	LastStartedID string // the task or run the last fire started; "" when it started nothing
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TriggerSpec is what a trigger's author writes.
type TriggerSpec struct {
	Name          string
	Kind          TriggerKind
	Schedule      string // cron only
	Target        TriggerTarget
	WorkflowID    string // target workflow
	AgentConfigID string // target agent
	SessionID     string
	Brief         string
	Enabled       bool
}

// Label names the trigger for people: its name, else what fires it.
func (t Trigger) Label() string {
	switch {
	case t.Name != "":
		return t.Name
	case t.Kind == TriggerCron:
		return "cron " + t.Schedule
	default:
		return "webhook"
	}
}

// Fired is what one fire of a trigger started: a workflow execution's task
// or an agent's run.
type Fired struct {
	Task *Task
	Run  *Run
}

// StartedID is the id of what the fire started.
func (f Fired) StartedID() string {
	switch {
	case f.Task != nil:
		return f.Task.ID
	case f.Run != nil:
		return f.Run.ID
	}
	return ""
}

// HookDelivery is a webhook delivery that fired, kept in the store every
// replica shares until Until, so the same delivery sent again — to any
// replica, or after a restart — fires nothing. It is named by the trigger,
// the timestamp as signed and the body's SHA-256 (hex): what a signature
// covers, so only the trigger's secret can make another.
type HookDelivery struct {
	TriggerID string
	Timestamp string
	BodyHash  string
	// Until is when it may be forgotten: past it the timestamp is stale,
	// so a resend is refused anyway.
	Until time.Time
}

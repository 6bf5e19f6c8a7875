package domain

import (
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// ActorKind says who did something the audit log records.
type ActorKind string

// The kinds of actor: a signed-in person, an inbound webhook, a trigger's
// schedule, or the server itself (start-up, pruning, a program embedding
// the core without a person).
const (
	ActorUser    ActorKind = "user"
	ActorWebhook ActorKind = "webhook"
	ActorTrigger ActorKind = "trigger"
	ActorSystem  ActorKind = "system"
)

// Values lists the actor kinds.
func (ActorKind) Values() []string {
	return []string{string(ActorUser), string(ActorWebhook), string(ActorTrigger), string(ActorSystem)}
}

// Actor is who an action is done by, and from which address.
type Actor struct {
	Kind    ActorKind
	ID      string // the user's id, or the trigger's
	Name    string // the username, or the trigger's name
	Address string // the client's address, when it came over the network
}

// UserActor is the actor of a person's request from address.
func UserActor(u User, address string) Actor {
	return Actor{Kind: ActorUser, ID: u.ID, Name: u.Username, Address: address}
}

// AuditOutcome says how a recorded action ended. A change is recorded only
// when it commits (success); a refused sign-in or webhook is recorded with
// its reason.
type AuditOutcome string

// The outcomes.
const (
	AuditSuccess AuditOutcome = "success"
	AuditFailure AuditOutcome = "failure"
)

// Values lists the outcomes.
func (AuditOutcome) Values() []string { return []string{string(AuditSuccess), string(AuditFailure)} }

// AuditRecord is one entry of the append-only audit log: who did what to
// which object, when, from where, how it ended and which fields it changed
// (names only: never a secret's value, never conversation content).
type AuditRecord struct {
	// Seq orders the log (assigned by the store when it appends); the
	// cursor of a listing.
	Seq        int64
	At         time.Time
	Actor      Actor
	Action     string // "<kind>.<verb>", e.g. provider.update, signin
	ObjectKind string
	ObjectID   string
	ObjectName string
	Outcome    AuditOutcome
	Fields     []string // the fields a write set or changed, by name
	Reason     string   // why a failure failed, in a person's words
	Method     string   // how a sign-in was made: password, token, oidc
}

// AuditPageMax is the most records one listing returns.
const AuditPageMax = 500

// AuditQuery selects audit records, newest first.
type AuditQuery struct {
	ActorID    string    // a user's or trigger's id
	ActorKind  ActorKind // user, webhook, trigger, system
	ObjectKind string
	ObjectID   string
	Action     string
	Since      time.Time // inclusive; zero: from the start
	Until      time.Time // exclusive; zero: up to now
	Before     int64     // the cursor: records with a smaller Seq; 0: the newest
	Limit      int       // 1..AuditPageMax
}

// CheckAuditQuery refuses a query the log cannot answer (validation).
func CheckAuditQuery(q AuditQuery) error {
	var f errs.FieldErrors
	switch q.ActorKind {
	case "", ActorUser, ActorWebhook, ActorTrigger, ActorSystem:
	default:
		f.Add("actor_kind", "must be user, webhook, trigger or system")
	}
	if q.Limit < 1 || q.Limit > AuditPageMax {
		f.Add("limit", "must be between 1 and %d", AuditPageMax)
	}
	if q.Before < 0 {
		f.Add("cursor", "is not a cursor this server gave")
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		f.Add("until", "must be after since")
	}
	return f.Err()
}

// Package models is what the server asks of models outside a run's loop:
// resolving a provider to the endpoint a call goes to, the providers' model
// lists and probes, the trace playground's replays, sessions' titles and
// the compaction summaries that fold a conversation.
package models

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Deps are what the models service works with.
type Deps struct {
	// Config finds the providers calls go to and the agents sessions run.
	Config ports.ConfigReader
	// Providers reads the providers a person may see and opens their keys.
	Providers *providers.Service
	// Settings carries the proxy and the title model.
	Settings *settings.Service
	// Outbound says what a provider's base URL may reach, by its owner;
	// nil leaves every provider strict (no private addresses).
	Outbound OutboundPolicies
	// Traces holds the generation spans the playground replays.
	Traces ports.TraceStore
	// Sessions are the conversations compaction folds.
	Sessions Sessions
	// Slots keeps runs off a session while a person's compaction folds it.
	Slots Slots
	// LLM makes the calls, routed by provider type.
	LLM ports.LLM
	// Clock times the model lists' reuse.
	Clock ports.Clock
}

// OutboundPolicies resolves what a configuration may reach by its owner
// (core/outbound).
type OutboundPolicies interface {
	For(ctx context.Context, ownerID string) (domain.OutboundPolicy, error)
}

// Sessions is the sessions' journal as compaction, titles and the
// playground use it.
type Sessions interface {
	// Get returns a session the caller may read (not_found otherwise).
	Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error)
	// CompactionDue says whether the session's history passed threshold.
	CompactionDue(ctx context.Context, sessionID string, threshold int64) (bool, error)
	// PlanFold picks the entries older than the kept window.
	PlanFold(ctx context.Context, sessionID string, window int) (sessions.Fold, error)
	// ApplyFold folds the planned entries under checkpoint; conflict when
	// another pass got there first.
	ApplyFold(ctx context.Context, sessionID string, f sessions.Fold, checkpoint domain.Entry) (domain.Entry, error)
	// SetTitle names an untitled session; false when it was named
	// meanwhile.
	SetTitle(ctx context.Context, sessionID, title string) (bool, error)
}

// Slots hold a session so no run starts on it (core/hub).
type Slots interface {
	// Hold takes the session's slot; conflict while a run holds it.
	Hold(sessionID string) (release func(), err error)
}

// Service makes the model calls that are not a run's turns.
type Service struct {
	d Deps
	// models caches each provider's model list for the agent form.
	models modelCache
}

// New returns a Service.
func New(d Deps) *Service { return &Service{d: d} }

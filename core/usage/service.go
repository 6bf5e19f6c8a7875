// Package usage keeps what model calls cost: a record of every call
// charged to the person it ran for, priced from the admins' price table
// when it is recorded; budgets checked before every call; and the reports
// a team reads its spending in. The Meter in front of the model port does
// the checking and the recording, so every kind of call is counted the
// same way, once per call, retries and fallbacks included.
package usage

import (
	"context"
	"log/slog"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Settings reads the admins' switches (core/settings implements it).
type Settings interface {
	Bool(ctx context.Context, key string) (bool, error)
}

// Agents finds an agent by id, for a budget's name.
type Agents interface {
	FindAgent(ctx context.Context, id string) (domain.Agent, error)
}

// Providers finds a provider by id, for a budget's name.
type Providers interface {
	FindProvider(ctx context.Context, id string) (domain.Provider, error)
}

// Conversations finds a conversation and a run by id, for the reads of
// their usage, which their owner alone may make.
type Conversations interface {
	FindSession(ctx context.Context, id string) (domain.Session, error)
	FindRun(ctx context.Context, id string) (domain.Run, error)
}

// Deps are what the service needs.
type Deps struct {
	Store     ports.UsageStore
	Users     ports.UserStore
	Agents    Agents
	Providers Providers
	// Conversations answers whose conversation or run it is.
	Conversations Conversations
	Meta          ports.MetaStore
	Settings      Settings
	Clock         ports.Clock
	IDs           ports.IDs
	Log           *slog.Logger
	// Recorded hears every record once it is stored (nil: nobody): the
	// metrics' counters.
	Recorded func(domain.UsageRecord)
}

// Service records, prices, limits and reports usage.
type Service struct {
	d Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}
}

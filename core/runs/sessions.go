package runs

import (
	"context"
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

// Sessions is the sessions' journal as the runner uses it (sessions.Journal):
// the session a run works on, its history, and the transactions that
// record a run's start, turns and end.
type Sessions interface {
	// Get returns a session the caller may read (not_found otherwise).
	Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error)
	// Find returns a session by id, whoever owns it.
	Find(ctx context.Context, id string) (domain.Session, error)
	// History is the session's active branch, as a run's input is built
	// from it.
	History(ctx context.Context, sessionID string) ([]domain.Entry, error)
	// Append adds entries at the session's tip in one transaction.
	Append(ctx context.Context, sessionID string, entries []domain.Entry) ([]domain.Entry, error)
	// AppendWith is Append with more writes in the same transaction.
	AppendWith(ctx context.Context, sessionID string, entries []domain.Entry, also func(tx ports.SessionTx) error) ([]domain.Entry, error)
	// BeginRunWith records a run's start and returns its planning phase
	// and history.
	BeginRunWith(ctx context.Context, run domain.Run, plan *bool, entries []domain.Entry, also func(tx ports.SessionTx) error) (sessions.Begun, error)
	// EndRun records a run's end with its last entries, if fence lets it.
	EndRun(ctx context.Context, run domain.Run, entries []domain.Entry, fence, also func(tx ports.SessionTx) error) error
	// LeavePlanning ends the session's planning phase.
	LeavePlanning(ctx context.Context, sessionID string) error
	// SaveContextProfile keeps what a run's context was made of.
	SaveContextProfile(ctx context.Context, sessionID, runID string, profile json.RawMessage) error
}

// Guardrails compiles the guardrails an agent selects (core/guardrails).
type Guardrails interface {
	// Checks compiles the named guardrails; validation for an unknown or
	// broken one.
	Checks(ctx context.Context, names []string) ([]*domain.GuardrailCheck, error)
}

// Attachments serves the images messages carry (core/attachments).
type Attachments interface {
	// ForMessage checks the caller's images a message is to carry.
	ForMessage(ctx context.Context, p domain.Principal, ids []string) ([]domain.Attachment, error)
	// DataURL is a stored image as a data URL, for a model call.
	DataURL(ctx context.Context, id string) (string, error)
}

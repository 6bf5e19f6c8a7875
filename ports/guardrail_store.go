package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// GuardrailReader reads guardrails.
type GuardrailReader interface {
	// FindGuardrail returns not_found when absent.
	FindGuardrail(ctx context.Context, id string) (domain.Guardrail, error)
	// FindGuardrailByName matches case-insensitively; not_found when absent.
	FindGuardrailByName(ctx context.Context, name string) (domain.Guardrail, error)
	// ListGuardrails returns every guardrail, built-ins first, then by name.
	ListGuardrails(ctx context.Context) ([]domain.Guardrail, error)
}

// GuardrailWriter writes guardrails. Names are one name space: inserts and
// updates return conflict when one is taken; updates and deletes return
// not_found for a missing row.
type GuardrailWriter interface {
	InsertGuardrail(ctx context.Context, g domain.Guardrail) error
	UpdateGuardrail(ctx context.Context, g domain.Guardrail) error
	DeleteGuardrail(ctx context.Context, id string) error
}

// GuardrailTx is one configuration write transaction as the guardrails
// service sees it: guardrails, and the agents that name them.
type GuardrailTx interface {
	GuardrailReader
	GuardrailWriter
	AgentReader
}

// GuardrailStore keeps guardrails.
type GuardrailStore interface {
	GuardrailReader
	// InGuardrailTx runs fn in one configuration write transaction,
	// committed when fn returns nil and rolled back otherwise.
	InGuardrailTx(ctx context.Context, fn func(tx GuardrailTx) error) error
}

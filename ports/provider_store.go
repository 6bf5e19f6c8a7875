package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// ProviderReader reads providers.
type ProviderReader interface {
	// FindProvider returns not_found when absent.
	FindProvider(ctx context.Context, id string) (domain.Provider, error)
	// ListProviders returns every provider, newest first.
	ListProviders(ctx context.Context) ([]domain.Provider, error)
}

// ProviderWriter writes providers. Inserts and updates return conflict
// when the name is taken among globals or among one owner's privates;
// updates and deletes return not_found for a missing row.
type ProviderWriter interface {
	InsertProvider(ctx context.Context, p domain.Provider) error
	UpdateProvider(ctx context.Context, p domain.Provider) error
	DeleteProvider(ctx context.Context, id string) error
}

// ProviderTx is one configuration write transaction as the providers
// service sees it: providers, and the agents that use them.
type ProviderTx interface {
	ProviderReader
	ProviderWriter
	AgentReader
}

// ProviderStore keeps providers.
type ProviderStore interface {
	ProviderReader
	// InProviderTx runs fn in one configuration write transaction,
	// committed when fn returns nil and rolled back otherwise.
	InProviderTx(ctx context.Context, fn func(tx ProviderTx) error) error
}

package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/ports"
)

// Models is the models service as the runner uses it (core/models): the
// endpoints its calls go to, and the calls around its turns.
type Models interface {
	// Endpoint resolves a provider to a call endpoint; a
	// *models.ConfigError says what configuration prevents it.
	Endpoint(ctx context.Context, providerID, agentName string) (ports.ProviderEndpoint, error)
	// TitleModel is the model that names sessions, agentModel unless a
	// setting says otherwise.
	TitleModel(ctx context.Context, agentModel string) string
	// Title names a conversation from its first message, unless a person
	// named it first.
	Title(ctx context.Context, ep ports.ProviderEndpoint, model, input, sessionID string) (string, bool, error)
	// Fold runs one compaction pass over a session.
	Fold(ctx context.Context, r models.FoldRequest) (models.Folded, error)
}

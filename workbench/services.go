package workbench

import (
	"context"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/core/workflows"
)

// The services. Every call takes the domain.Principal it acts for (see
// Admin and Principal) and applies the same rules as the REST API: who may
// see and change what, validation, transactions.

// Auth signs people in: users, roles and tokens.
func (w *Workbench) Auth() *auth.Service { return w.auth }

// Settings reads and writes the global settings.
func (w *Workbench) Settings() *settings.Service { return w.settings }

// Providers manages model providers and their sealed keys.
func (w *Workbench) Providers() *providers.Service { return w.providers }

// Agents manages agent configurations.
func (w *Workbench) Agents() *agents.Service { return w.agents }

// Sessions manages conversations and their transcripts.
func (w *Workbench) Sessions() *sessions.Service { return w.sessions }

// Runs starts, streams (Subscribe), cancels and approves (Decide) runs.
func (w *Workbench) Runs() *runs.Service { return w.runs }

// Models lists and tests providers' models, replays traced model calls
// (the playground) and compacts sessions on request.
func (w *Workbench) Models() *models.Service { return w.models }

// Tasks runs background tasks and workflow executions.
func (w *Workbench) Tasks() *tasks.Manager { return w.tasks }

// Workflows manages workflow definitions.
func (w *Workbench) Workflows() *workflows.Service { return w.workflows }

// Triggers manages cron and webhook triggers.
func (w *Workbench) Triggers() *triggers.Service { return w.triggers }

// Traces reads runs' traces.
func (w *Workbench) Traces() *traces.Service { return w.traces }

// Sandboxes manages sandboxes and projects.
func (w *Workbench) Sandboxes() *sandboxes.Service { return w.sandboxes }

// MCP manages MCP server connections.
func (w *Workbench) MCP() *mcp.Service { return w.mcp }

// AdminToken is the bootstrap admin's API token (Options.AdminToken, or
// the one minted on the first Open): the credential of the sign-in link.
func (w *Workbench) AdminToken() string { return w.token }

// Admin is the bootstrap admin, for a program acting as the workbench's
// owner.
func (w *Workbench) Admin(ctx context.Context) (domain.Principal, error) {
	return w.auth.Authenticate(ctx, w.token)
}

// Principal is the account of a person the program knows, created on
// first use as Handler's SignIn would (see Identity).
func (w *Workbench) Principal(ctx context.Context, id Identity) (domain.Principal, error) {
	return w.auth.HostPrincipal(ctx, auth.HostIdentity{Username: id.Username, Admin: id.Admin})
}

// StoreName names where the data lives, for logs: sqlite(path) or
// postgres(URL without its password).
func (w *Workbench) StoreName() string { return w.db.String() }

// Internals are the composed parts beneath the services, for tests and
// diagnostics. They are not a stable interface: a program should not need
// them.
type Internals struct {
	DB      *sqlstore.DB
	API     *httpapi.Server
	Streams *livestreams.Registry
	// MetricsAddr is where Options.MetricsAddr's listener listens ("" when
	// none).
	MetricsAddr string
}

// Internals returns the composed parts (see Internals).
func (w *Workbench) Internals() Internals {
	in := Internals{DB: w.db, API: w.api, Streams: w.streams}
	if w.watch.ln != nil {
		in.MetricsAddr = w.watch.ln.Addr().String()
	}
	return in
}

// OpenAPI returns the API's OpenAPI document (YAML), as served at
// /api/v1/openapi.yaml.
func OpenAPI() ([]byte, error) { return httpapi.Document() }

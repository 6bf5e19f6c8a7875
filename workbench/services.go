package workbench

import (
	"context"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// The services. Every call takes the domain.Principal it acts for (see
// Admin and Principal) and applies the same rules as the REST API: who may
// see and change what, validation, transactions. Each is a facade over a
// core service offering what a program needs to drive the workbench; the
// rest of the engine stays behind them.

// Providers manages model providers and their sealed keys.
func (w *Workbench) Providers() Providers { return Providers{w.providers} }

// Agents manages agent configurations.
func (w *Workbench) Agents() Agents { return Agents{w.agents} }

// Sessions manages conversations and reads their transcripts.
func (w *Workbench) Sessions() Sessions { return Sessions{w.sessions} }

// Runs starts, streams (Subscribe), cancels and approves (Decide) runs.
func (w *Workbench) Runs() Runs { return Runs{w.runs} }

// Traces reads runs' traces.
func (w *Workbench) Traces() Traces { return Traces{w.traces} }

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

// The agents-server command's tests and diagnostics reach the parts
// beneath the facades through an internal package, so no embedder can.
func init() {
	workbenchparts.Of = func(wb any) workbenchparts.Parts { return wb.(*Workbench).parts() }
}

// parts returns the composed parts (see workbenchparts.Parts).
func (w *Workbench) parts() workbenchparts.Parts {
	p := workbenchparts.Parts{DB: w.db, API: w.api, Streams: w.streams,
		Auth: w.auth, Settings: w.settings, Providers: w.providers, Agents: w.agents, Sessions: w.sessions, Runs: w.runs,
		Tasks: w.tasks, Workflows: w.workflows, Triggers: w.triggers, Traces: w.traces, Sandboxes: w.sandboxes, MCP: w.mcp}
	if w.watch.ln != nil {
		p.MetricsAddr = w.watch.ln.Addr().String()
	}
	return p
}

// OpenAPI returns the API's OpenAPI document (YAML), as served at
// /api/v1/openapi.yaml.
func OpenAPI() ([]byte, error) { return httpapi.Document() }

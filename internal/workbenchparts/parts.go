// Package workbenchparts hands the agents-server command (its tests and
// diagnostics) the parts beneath a workbench's public surface: the store,
// the API server, the live streams and the concrete core services. It is
// internal so that no embedding program can depend on them: the public
// package offers curated facades instead, and api/workbench.txt guards
// what those expose.
package workbenchparts

import (
	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/mcp"
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

// Parts are an open workbench's composed parts. They are not a stable
// interface.
type Parts struct {
	DB      *sqlstore.DB
	API     *httpapi.Server
	Streams *livestreams.Registry
	// MetricsAddr is where the separate metrics listener listens ("" when
	// none).
	MetricsAddr string

	Auth      *auth.Service
	Settings  *settings.Service
	Providers *providers.Service
	Agents    *agents.Service
	Sessions  *sessions.Service
	Runs      *runs.Service
	Tasks     *tasks.Manager
	Workflows *workflows.Service
	Triggers  *triggers.Service
	Traces    *traces.Service
	Sandboxes *sandboxes.Service
	MCP       *mcp.Service
}

// Of returns the parts of wb, a *workbench.Workbench (the workbench
// package sets it when it is loaded: it imports this package, so this one
// cannot name its type).
var Of func(wb any) Parts

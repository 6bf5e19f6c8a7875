// Package mcp manages MCP servers: their scoped configuration with sealed
// credentials, one live connection per enabled server (connected in the
// background, redialled after transport failures), the one derived status
// every read reports, OAuth sign-in and grants, and the tools agents pick
// from live connections.
package mcp

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

const what = "MCP server"

// Deps are what the service works with.
type Deps struct {
	Store  ports.MCPServerStore
	Config ports.ConfigReader // the agents that select a server's tools
	Box    *secrets.Box
	Dialer ports.MCPDialer
	// Outbound says what a server's endpoint and OAuth servers may reach,
	// by its owner; nil leaves every server strict.
	Outbound OutboundPolicies
	// Settings reads max_mcp_servers_per_user and
	// mcp_stdio_members_on_host; nil leaves the number of servers an
	// account owns unbounded and members' programs off the host.
	Settings Settings
	// Users finds a stdio server's owner; Projects runs programs in
	// projects' sandboxes (nil: none can).
	Users    Users
	Projects Projects
	IDs      ports.IDs
	Clock    ports.Clock
	Log      *slog.Logger
}

// OutboundPolicies resolves what a configuration may reach by its owner
// (core/outbound).
type OutboundPolicies interface {
	For(ctx context.Context, ownerID string) (domain.OutboundPolicy, error)
}

// Settings reads settings of the registry.
type Settings interface {
	// Int returns an int setting's effective value.
	Int(ctx context.Context, key string) (int, error)
	// Bool returns a bool setting's effective value.
	Bool(ctx context.Context, key string) (bool, error)
}

// Service manages MCP servers and their connections. Start connects the
// enabled ones; Close ends every connection.
type Service struct {
	d     Deps
	box   *secrets.Box
	root  context.Context
	stop  context.CancelFunc
	mu    sync.Mutex
	conns map[key]*conn // the shared connections and each person's
	// attempts are this replica's interactive sign-ins waiting for their
	// callback, by OAuth state (the store keeps every replica's).
	attempts map[string]*attempt
	// started is set by Start: from then on a read catches up with rows
	// other replicas changed (live).
	started bool
	wg      sync.WaitGroup
}

// New returns a Service; nothing connects until Start.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	root, stop := context.WithCancel(context.Background())
	return &Service{d: d, box: d.Box, root: root, stop: stop, conns: map[key]*conn{}}
}

// Server is a server as a read reports it: the row with its secrets
// masked, the derived status, the last connection error, whether an OAuth
// grant is stored, and the tools of the live connection. On a server each
// person signs in to, the status, error, grant and tools are the reader's
// own.
type Server struct {
	domain.MCPServer
	Status        domain.MCPStatus
	LastError     string
	HasOAuthToken bool
	Tools         []Tool
}

// List returns the servers the caller can see, others' shared ones first.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]Server, error) {
	all, err := s.d.Store.ListMCPServers(ctx)
	if err != nil {
		return nil, err
	}
	rows := domain.VisibleOrdered(all, p, func(x domain.MCPServer) domain.Ownership { return x.Ownership })
	out := make([]Server, len(rows))
	for i, r := range rows {
		out[i] = s.view(ctx, r, p.User.ID)
	}
	return out, nil
}

// Get returns one server; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (Server, error) {
	row, err := s.find(ctx, p, id)
	if err != nil {
		return Server{}, err
	}
	return s.view(ctx, row, p.User.ID), nil
}

func (s *Service) find(ctx context.Context, p domain.Principal, id string) (domain.MCPServer, error) {
	row, err := s.d.Store.FindMCPServer(ctx, id)
	if err != nil {
		return row, err
	}
	return row, row.CheckRead(p, what)
}

// Create adds a server owned by the caller, private unless an admin asks
// for global, and connects it in the background when enabled. Returns
// validation, forbidden, or conflict for a taken name or when the caller
// owns max_mcp_servers_per_user servers already.
func (s *Service) Create(ctx context.Context, p domain.Principal, scope domain.Scope, in Input) (Server, error) {
	if scope == "" {
		scope = domain.ScopePrivate
	}
	if err := domain.CheckCreate(p, scope, what); err != nil {
		return Server{}, err
	}
	now := s.d.Clock.Now()
	row := domain.MCPServer{ID: s.d.IDs.NewID(), Ownership: domain.Ownership{Scope: scope, OwnerID: p.User.ID}, CreatedAt: now, UpdatedAt: now}
	if _, err := s.applyInput(&row, in, domain.MCPServer{}); err != nil {
		return Server{}, err
	}
	if err := s.checkProgram(ctx, p, row.Config); err != nil {
		return Server{}, err
	}
	admit, err := s.ownedCap(ctx)
	if err != nil {
		return Server{}, err
	}
	var refused error // the cap's refusal, as opposed to the store's
	actx := audit.Change(ctx, now, "mcp_server.create", audit.Object{Kind: "mcp_server", ID: row.ID, Name: row.Name}, audit.Diff(nil, row)...)
	err = s.d.Store.InsertMCPServer(actx, row, func(owned int) error {
		refused = admit(owned)
		return refused
	})
	if refused != nil {
		return Server{}, refused
	}
	if err != nil {
		return Server{}, nameTaken(err, row.Name)
	}
	s.d.Log.Info("mcp server created", "server", row.Name, "server_id", row.ID, "enabled", row.Enabled)
	s.reconnect(row.ID)
	return s.view(ctx, row, p.User.ID), nil
}

// Update replaces a server's fields and reconnects it in the background.
// A changed endpoint, auth mode, client id or sign-in mode (one shared or
// one per person) drops the OAuth grants: the shared one in the same
// transaction, the personal ones right after; a rename is refused while
// agents select the server's tools by the old name. Returns not_found,
// forbidden, validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in Input) (Server, error) {
	var refused error // the change's own refusal, as opposed to the store's
	var dropPersonal bool
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), "mcp_server.update", audit.Object{Kind: "mcp_server", ID: id})
	row, err := s.d.Store.UpdateMCPServer(actx, id, func(row *domain.MCPServer) error {
		before := *row
		dropPersonal, refused = s.change(ctx, p, row, in)
		audit.Changed(rec, row.Name, before, *row)
		return refused
	})
	if refused != nil {
		return Server{}, refused
	}
	if err != nil {
		return Server{}, nameTaken(err, in.Name)
	}
	if dropPersonal {
		if err := s.revokePersonal(ctx, row, ""); err != nil {
			return Server{}, err
		}
	}
	s.d.Log.Info("mcp server updated", "server", row.Name, "server_id", row.ID, "enabled", row.Enabled)
	s.reconnect(row.ID)
	return s.view(ctx, row, p.User.ID), nil
}

// change applies an update to the stored row: the caller may edit it, the
// input is valid, a rename leaves no agent's selection behind, and a new
// endpoint, auth mode, client id or sign-in mode drops the grant. It
// reports whether the people's own grants no longer apply.
func (s *Service) change(ctx context.Context, p domain.Principal, row *domain.MCPServer, in Input) (dropPersonal bool, err error) {
	if err := row.CheckUpdate(p, what); err != nil {
		return false, err
	}
	before := *row
	drop, err := s.applyInput(row, in, before)
	if err != nil {
		return false, err
	}
	if err := s.checkProgram(ctx, p, row.Config); err != nil {
		return false, err
	}
	if row.Name != before.Name {
		if err := s.checkUnused(ctx, before, "renamed"); err != nil {
			return false, err
		}
	}
	if drop || row.Config.PerPersonAuth {
		row.SealedGrant = ""
	}
	row.UpdatedAt = s.d.Clock.Now()
	return drop && before.Config.PerPersonAuth, nil
}

// SetScope publishes (global, admins) or unpublishes (private, an admin
// or the author) a server; refused (conflict) while an agent that could
// then no longer use it selects its tools. Returns not_found, forbidden,
// conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (Server, error) {
	var refused error
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), audit.ScopeAction("mcp_server", to), audit.Object{Kind: "mcp_server", ID: id}, "scope")
	row, err := s.d.Store.UpdateMCPServer(actx, id, func(row *domain.MCPServer) error {
		rec.ObjectName = row.Name
		refused = s.rescope(ctx, p, row, to)
		return refused
	})
	if refused != nil {
		return Server{}, refused
	}
	if err != nil {
		return Server{}, err
	}
	s.d.Log.Info("mcp server scope changed", "server", row.Name, "server_id", id, "scope", to)
	return s.view(ctx, row, p.User.ID), nil
}

func (s *Service) rescope(ctx context.Context, p domain.Principal, row *domain.MCPServer, to domain.Scope) error {
	if err := row.CheckScopeChange(p, to, what); err != nil {
		return err
	}
	if to != domain.ScopeGlobal && row.Config.PerPersonAuth {
		return errs.E(errs.Conflict, "each person signs in to this server, which only a shared server can ask: switch it to one shared sign-in before making it private")
	}
	users, err := s.agentsSelecting(ctx, row.Name)
	if err != nil {
		return err
	}
	var stranded []string
	for _, a := range users {
		if !domain.ReferenceSurvives(a.Ownership, row.Ownership, to) {
			stranded = append(stranded, a.Name)
		}
	}
	if len(stranded) > 0 {
		slices.Sort(stranded)
		return errs.E(errs.Conflict, "shared or other people's agents select this server's tools (%s); it must stay global", strings.Join(stranded, ", "))
	}
	row.Scope, row.UpdatedAt = to, s.d.Clock.Now()
	return nil
}

// Delete removes a server and ends its connection; refused (conflict)
// while an agent selects its tools. Returns not_found, forbidden, conflict.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	row, err := s.find(ctx, p, id)
	if err != nil {
		return err
	}
	if err := row.CheckDelete(p, what); err != nil {
		return err
	}
	if err := s.checkUnused(ctx, row, "deleted"); err != nil {
		return err
	}
	actx := audit.Change(ctx, s.d.Clock.Now(), "mcp_server.delete", audit.Object{Kind: "mcp_server", ID: id, Name: row.Name})
	if err := s.d.Store.DeleteMCPServer(actx, id); err != nil {
		return err
	}
	s.d.Log.Info("mcp server deleted", "server", row.Name, "server_id", row.ID)
	s.disconnect(id)
	return nil
}

// checkUnused refuses to delete or rename a server whose tools agents
// select: they name its tools by the server's name.
func (s *Service) checkUnused(ctx context.Context, row domain.MCPServer, change string) error {
	agents, err := s.agentsSelecting(ctx, row.Name)
	if err != nil || len(agents) == 0 {
		return err
	}
	users := make([]string, len(agents))
	for i, a := range agents {
		users[i] = a.Name
	}
	slices.Sort(users)
	return errs.E(errs.Conflict, "the server cannot be %s while agents select its tools: %s", change, strings.Join(users, ", "))
}

// agentsSelecting returns the agents that select a tool of the server
// named name.
func (s *Service) agentsSelecting(ctx context.Context, name string) ([]domain.Agent, error) {
	all, err := s.d.Config.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	var out []domain.Agent
	for _, a := range all {
		if slices.ContainsFunc(a.Tools, func(t string) bool {
			srv, _, ok := domain.SplitMCPToolName(t)
			return ok && strings.EqualFold(srv, name)
		}) {
			out = append(out, a)
		}
	}
	return out, nil
}

// nameTaken words the store's conflict — the only one it reports on a
// write — as the name rule it is.
// ownedCap returns the check an insert runs on how many servers the
// caller owns: fewer than max_mcp_servers_per_user, admins included (the
// cap bounds the live connections one account can hold the server to; an
// admin who needs more raises it). Every server counts, enabled or not,
// private or global: a disabled one is a click from connecting.
func (s *Service) ownedCap(ctx context.Context) (func(owned int) error, error) {
	if s.d.Settings == nil {
		return func(int) error { return nil }, nil
	}
	limit, err := s.d.Settings.Int(ctx, settings.KeyMaxMCPServersPerUser)
	if err != nil {
		return nil, err
	}
	return func(owned int) error {
		if owned >= limit {
			return errs.E(errs.Conflict, "you own %d MCP servers, the most one account may (max_mcp_servers_per_user); delete one to add another", owned)
		}
		return nil
	}, nil
}

func nameTaken(err error, name string) error {
	if errs.Is(err, errs.Conflict) {
		return errs.E(errs.Conflict, "an MCP server named %q already exists: names prefix the servers' tools, so they are unique across every owner", name)
	}
	return err
}

// view masks a row's secrets and adds the live facts, as user sees them.
func (s *Service) view(ctx context.Context, row domain.MCPServer, user string) Server {
	grant, err := s.grantOf(ctx, row, user)
	if err != nil {
		s.d.Log.Warn("reading a person's MCP grant failed", "server", row.Name, "server_id", row.ID, "err", err)
	}
	out := Server{MCPServer: row, HasOAuthToken: grant != ""}
	out.SealedGrant = ""
	masked := make(map[string]string, len(row.Config.Headers))
	for k, v := range row.Config.Headers {
		masked[k] = secrets.Masked(v)
	}
	out.Config.Headers = masked
	env := make(map[string]string, len(row.Config.Env))
	for k, v := range row.Config.Env {
		env[k] = secrets.Masked(v)
	}
	out.Config.Env = env
	if out.Config.Args == nil {
		out.Config.Args = []string{}
	}
	if out.Config.Transport == "" {
		out.Config.Transport = domain.MCPHTTP
	}
	out.Config.OAuthClientSecret = secrets.Masked(row.Config.OAuthClientSecret)
	if out.Config.OAuthScopes == nil {
		out.Config.OAuthScopes = []string{}
	}
	out.Status, out.LastError, out.Tools = s.liveWith(row, user, grant)
	if err != nil {
		out.Status, out.LastError, out.Tools = domain.MCPDisconnected, "the sign-in could not be read: "+err.Error(), nil
	}
	return out
}

package workbench

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/agents-server/agents-server/adapters/chatgpt"
	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/ids"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	mcpclient "github.com/agents-server/agents-server/adapters/mcp"
	"github.com/agents-server/agents-server/adapters/mcpserver"
	dockersandbox "github.com/agents-server/agents-server/adapters/sandbox/docker"
	e2bsandbox "github.com/agents-server/agents-server/adapters/sandbox/e2b"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/adapters/webfetch"
	"github.com/agents-server/agents-server/adapters/ws"
	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/ask"
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/memories"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/outbound"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/recovery"
	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/sandboxtools"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/skills"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/core/usage"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/frontend"
	"github.com/agents-server/agents-server/ports"
)

// Workbench is an open workbench: the ONE place concrete adapters meet the
// core. Its methods hand out the services; Handler serves it over HTTP.
// Open builds it in phases, one part each: the storage, the services (with
// the adapters they drive), the edges that serve them, and the background
// work.
type Workbench struct {
	opts Options
	log  *slog.Logger
	storage
	services
	edges
	roll      *replicas.Roll   // this replica's place on the roll
	upkeep    *replicas.Upkeep // the background work, once started
	closeOnce sync.Once
	closeErr  error
}

// storage is where the data lives and what names and times it: the store,
// its sealing box, the clock, the id minter and this replica's id.
type storage struct {
	db            *sqlstore.DB
	box           *secrets.Box
	clock         ports.Clock
	ids           ports.IDs
	replica       string // this workbench's id on the replica roll
	unlockReplica func() // gives up the data dir's replica id
}

// services are the core services, and the adapters they drive that the
// workbench closes or reads: the sandbox runtime, the watchers, the peers.
type services struct {
	auth        *auth.Service
	settings    *settings.Service
	providers   *providers.Service
	agents      *agents.Service
	sessions    *sessions.Service
	runs        *runs.Service
	sweep       *recovery.Sweep // ends the runs a crash left running
	models      *models.Service
	tasks       *tasks.Manager
	workflows   *workflows.Service
	triggers    *triggers.Service
	traces      *traces.Service
	audit       *audit.Service
	usage       *usage.Service
	attachments *attachments.Service
	guardrails  *guardrails.Service
	skills      *skills.Service
	streams     *livestreams.Registry
	sandboxes   *sandboxes.Service
	mcp         *mcp.Service
	policies    *outbound.Policies
	docker      *dockersandbox.Runtime
	watch       *watchers          // metrics, trace export
	peers       *peering           // joins the replicas (nil on SQLite)
	standing    *replicas.Standing // this replica's hold on the roll (its beats)
	token       string             // the bootstrap admin's token
}

// edges serve the services: the REST API, the sockets, the MCP endpoint.
type edges struct {
	api       *httpapi.Server
	bus       *ws.Bus
	terminal  *ws.Terminal
	mcpServer http.Handler
}

// Open opens (creating when absent) and migrates the store, checks the
// sealing key against it, makes sure the bootstrap admin exists, ends the
// runs and tasks a crash left running, and starts the upkeep: MCP
// connections, cron triggers, pruning, idle sandbox stops. Nothing is
// served until the program mounts it. Errors are *errs.Error with a
// message a person can act on.
func Open(ctx context.Context, o Options) (_ *Workbench, err error) {
	o = o.withDefaults()
	natives, err := nativeTools(o.Tools)
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "Options.Tools")
	}
	w := &Workbench{opts: o, log: o.Logger}
	if w.storage, err = openStorage(ctx, o); err != nil {
		return nil, err
	}
	// What a failed Open built is closed, newest first.
	defer func() {
		if err != nil {
			w.abandon(ctx)
		}
	}()
	if err := w.buildServices(ctx, natives); err != nil {
		return nil, err
	}
	if err := w.buildEdges(); err != nil {
		return nil, err
	}
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// abandon closes what a failed Open had opened, newest first: the
// watchers, the peers, the replica id, the store.
func (w *Workbench) abandon(ctx context.Context) {
	if w.watch != nil {
		w.watch.close(ctx)
	}
	w.peers.close()
	if w.unlockReplica != nil {
		w.unlockReplica()
	}
	w.db.Close()
}

// openStorage opens the store and checks the sealing key against it, and
// settles the clock, the id minter and this replica's id. On an error
// nothing is left open.
func openStorage(ctx context.Context, o Options) (_ storage, err error) {
	log := o.Logger
	box, err := secrets.NewBox(o.SecretKey)
	if err != nil {
		return storage{}, err
	}
	db, err := openStore(ctx, o)
	if err != nil {
		return storage{}, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	clock := o.Clock
	if clock == nil {
		clock = ports.SystemClock
	}
	// The key's first sealing of this database is recorded with it; a
	// start refused for a missing or wrong key is recorded on its own.
	key := audit.Object{Kind: "secret_key", ID: box.KeyID(), Name: box.KeyID()}
	if err := secrets.CheckKey(audit.Change(ctx, clock.Now(), "secret_key.seal", key), box, db); err != nil {
		if errs.Is(err, errs.Unavailable) {
			if rerr := db.AppendAudit(ctx, domain.AuditRecord{At: clock.Now(), Actor: ports.ActorOf(ctx), Action: "secret_key.check",
				ObjectKind: key.Kind, ObjectID: key.ID, ObjectName: key.Name, Outcome: domain.AuditFailure, Reason: errs.Short(errs.MessageOf(err))}); rerr != nil {
				log.Warn("recording the refused secret key failed", "err", rerr)
			}
		}
		return storage{}, err
	}
	if box.Sealing() {
		log.Info(secrets.Describe(box))
	} else {
		log.Warn(secrets.Describe(box))
	}
	st := storage{db: db, box: box, clock: o.Clock, ids: o.IDs}
	if st.clock == nil {
		st.clock = ports.SystemClock
	}
	if st.ids == nil {
		st.ids = ids.UUIDv7{}
	}
	if st.replica, st.unlockReplica, err = replicaID(o, st.ids); err != nil {
		return storage{}, err
	}
	return st, nil
}

// buildServices builds the core services on the storage, each with the
// adapters it drives, wired to one another at construction; it makes sure
// the bootstrap admin exists and skips the cron ticks missed while the
// process was down.
func (w *Workbench) buildServices(ctx context.Context, natives tools.Natives) (err error) {
	o, log, db, box, clock, idGen := w.opts, w.log, w.db, w.box, w.clock, w.ids
	s := &w.services
	s.settings = settings.New(db, box, clock)
	// What a member configures reaches public addresses only, unless an
	// admin setting opens more; what an admin configures reaches anything.
	s.policies = outbound.New(s.settings, db)
	// Replicas sharing the store (Postgres) are joined over its bus: each
	// hub relays what it numbers, run commands reach the replica running
	// the run, and a credential's streams close on every replica.
	if s.peers, err = joinPeers(db, w.replica, idGen, log); err != nil {
		return err
	}
	eventHub := hub.New(o.Hub, clock, seqMarks{db: db, log: log}, s.peers.relay())
	// Whether this replica still holds its place on the roll: the roll's
	// beats keep it; the run engine asks it before each turn and tool.
	s.standing = replicas.NewStanding(s.peers != nil, o.FailoverAfter)
	if s.providers, err = buildProviders(o, db, box, idGen, clock); err != nil {
		return err
	}
	s.guardrails = guardrails.New(db, idGen, clock)
	s.docker, s.sandboxes = buildSandboxes(o, db, box, s.settings, idGen, clock)
	s.mcp = mcp.New(mcp.Deps{Store: db, Config: db, Box: box, Dialer: &mcpclient.Dialer{Version: o.Version}, Settings: s.settings,
		Users: db, Projects: mcpProjects{db: db, sandboxes: s.sandboxes}, Outbound: s.policies, IDs: idGen, Clock: clock, Log: log})
	// The sessions' journal is what runs, compaction and tasks write
	// through; the service that deletes and branches sessions (stopping
	// their live work) is built after the run engine and the task manager.
	// The context report asks live MCP servers.
	journal := sessions.NewJournal(sessions.Deps{Store: db, Agents: db, Traces: db, Runs: db, MCP: s.mcp, Search: db, IDs: idGen, Clock: clock})
	s.workflows = workflows.NewService(db, idGen, clock)
	s.skills = skills.NewService(db, idGen, clock)
	// The task manager drives the run engine, and the engine tells it of
	// every run's pause and end: a cycle, closed by the one link made
	// after construction (AttachEngine, below).
	s.tasks = tasks.New(tasks.Deps{Store: db, Approvals: db, Sessions: journal, Config: db, Settings: s.settings, Hub: eventHub,
		Workflows: s.workflows, Projects: s.sandboxes, IDs: idGen, Clock: clock, Log: log})
	s.attachments = attachments.New(db, idGen, clock, o.Images)
	if s.watch, err = newWatchers(ctx, o, eventHub, db, log); err != nil {
		return err
	}
	codex := openai.NewCodex(openai.CodexOptions{BaseURL: o.ChatGPTBackendURL, Credentials: s.providers, HTTPClient: o.ChatGPTHTTP})
	// Every model call passes the usage meter: checked against the
	// budgets before it is sent, recorded and priced once it ends.
	s.usage = usage.New(usage.Deps{Store: db, Users: db, Agents: db, Providers: db, Conversations: db, Meta: db, Settings: s.settings,
		Clock: clock, IDs: idGen, Log: log, Recorded: s.watch.metrics.UsageRecorded})
	if err := s.usage.SeedPrices(ctx); err != nil {
		return err
	}
	llm := s.usage.Meter(newModelRouter(codex, o.Models))
	s.models = models.New(models.Deps{Config: db, Providers: s.providers, Settings: s.settings, Outbound: s.policies, Traces: db,
		Sessions: journal, Slots: eventHub, LLM: llm, Clock: clock})
	// Who hears of runs' lives, in order: the watchers count and export
	// how runs end (first: a client that saw a run end reads it counted);
	// a task's status follows its run.
	lifecycle := []runs.Listener{traces.EndsTo(s.watch.observer()), s.tasks}
	s.runs = runs.New(runs.Deps{
		Hub: eventHub, Sessions: journal, Runs: db, Config: db, Models: s.models,
		Settings: s.settings, Guardrails: s.guardrails, Traces: db, Approvals: db, Sandboxes: s.sandboxes, Tasks: s.tasks,
		// Where tools come from, in the order they are offered (after the
		// built-ins): a new origin is one more toolset here.
		Toolsets: []tools.Toolset{natives, s.mcp.Toolset(), s.tasks.Verbs(), s.workflows.Toolset(),
			sandboxtools.NewToolset(s.sandboxes), s.skills.Toolset()},
		Attachments: s.attachments, LLM: llm, IDs: idGen, Clock: clock, Log: log, Replica: w.replica,
		Fenced: s.standing.Fenced, Peers: s.peers.runPeers(), Observer: s.watch.observer(),
		Listeners: lifecycle,
	})
	// The restart's sweep ends what a crash left running, telling the
	// same listeners.
	s.sweep = recovery.New(recovery.Deps{Runs: db, Sessions: journal, Traces: db, Observer: s.watch.observer(), Hub: eventHub,
		Listeners: lifecycle, Replica: w.replica, Clock: clock, IDs: idGen, Log: log})
	// The one late link: see tasks.Manager.AttachEngine.
	s.tasks.AttachEngine(s.runs)
	// A deleted session's work stops first — its run, its tasks and their
	// runs (the task manager, over the run engine); a branch move holds the
	// session's slot.
	s.sessions = sessions.New(journal, s.tasks)
	// Every open event stream and socket is registered by user and token;
	// the registry re-reads a credential's standing from the store, and
	// the auth service's changes reach the streams they invalidate (on
	// every replica). A deleted account's runs stop first.
	s.audit = audit.New(db, func(ctx context.Context) (int, error) { return s.settings.Int(ctx, settings.KeyAuditRetentionDays) }, clock)
	s.streams = livestreams.New(auth.NewStanding(db, db, clock), s.settings, clock)
	sso, err := buildOIDC(o, db, s.settings)
	if err != nil {
		return err
	}
	if s.auth, err = auth.New(auth.Deps{Users: db, Tokens: db, IDs: idGen, Clock: clock, Log: log, Params: o.PasswordParams,
		Work: s.runs, Streams: s.peers.streams(s.streams), Fence: s.peers.fence(), Refusals: s.audit, OIDC: sso,
		PasswordLoginOff: o.PasswordLoginOff}); err != nil {
		return err
	}
	// What the other replicas send is filed once all it reaches is built.
	s.peers.listen(replicas.Deliveries{Hub: eventHub, Runs: s.runs, Streams: s.streams, Credentials: s.auth, Stored: db})
	if s.token, err = s.auth.Bootstrap(ctx, o.AdminToken); err != nil {
		return err
	}
	s.traces = traces.New(db, s.sessions, s.settings, clock)
	s.agents = agents.New(agents.Deps{Store: db, IDs: idGen, Clock: clock, Skills: s.skills.Exists, MCP: s.mcp, Natives: natives,
		ProviderTypes: s.providers.LookupType})
	s.triggers = triggers.New(triggers.Deps{Store: db, Deliveries: db, Users: db, Config: db, Sessions: s.sessions,
		Workflows: s.workflows, Starter: triggerStarter{s.tasks, s.runs}, Box: box, IDs: idGen, Clock: clock,
		Location: time.Local, Log: log, Refusals: s.audit, Budgets: func(ctx context.Context, ownerID, agentID string) error {
			return s.usage.Admit(ctx, ports.UsageCall{UserID: ownerID, AgentID: agentID}, "")
		}})
	// Ticks missed while the process was down are skipped before anything
	// could fire them: they are not replayed.
	return s.triggers.SkipMissed(ctx)
}

// buildProviders builds the provider service with the program's provider
// types. A chatgpt_login provider signs in at OpenAI's auth server (or the
// one the options name) and is called through the Codex bridge.
func buildProviders(o Options, db *sqlstore.DB, box *secrets.Box, idGen ports.IDs, clock ports.Clock) (*providers.Service, error) {
	var nativeTypes []string
	for _, m := range o.Models {
		if m.LLM == nil {
			return nil, errs.E(errs.Validation, "Options.Models: provider type %q has no LLM", m.Name)
		}
		nativeTypes = append(nativeTypes, m.Name)
	}
	svc, err := providers.New(providers.Deps{Store: db, Box: box, IDs: idGen, Clock: clock,
		ChatGPT: chatgpt.New(chatgpt.Options{Issuer: o.ChatGPTAuthURL, HTTP: o.ChatGPTHTTP}), ChatGPTStore: db,
		NativeTypes: nativeTypes, Log: o.Logger})
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "Options.Models")
	}
	return svc, nil
}

// buildSandboxes builds the sandbox runtimes and the service over them.
func buildSandboxes(o Options, db *sqlstore.DB, box *secrets.Box, settingsSvc *settings.Service, idGen ports.IDs,
	clock ports.Clock) (*dockersandbox.Runtime, *sandboxes.Service) {
	// The store keeps ssh:// daemons' pinned host keys, so a restart does
	// not trust a changed key on first use again.
	docker := dockersandbox.New(dockersandbox.Options{HostKeys: db, Clock: clock})
	// An e2b project's sandbox is recorded in its row before it is used.
	e2b := e2bsandbox.New(e2bsandbox.Options{Refs: db, HTTP: o.E2BHTTP, Now: clock.Now, Log: o.Logger})
	return docker, sandboxes.New(sandboxes.Deps{Store: db, Box: box, Settings: settingsSvc,
		Backends:        map[string]ports.SandboxBackend{docker.Type(): docker, e2b.Type(): e2b},
		ContainerAdmins: map[string]ports.ContainerAdmin{docker.Type(): docker},
		IDs:             idGen, Clock: clock, Log: o.Logger})
}

// buildEdges builds what serves the services: the REST API (with the
// UI), the event and terminal sockets, and the MCP endpoint.
func (w *Workbench) buildEdges() (err error) {
	o, s := w.opts, &w.services
	httpCfg := o.HTTP
	httpCfg.BaseURL = o.BaseURL
	httpCfg.Observe = s.watch.metrics.Request
	w.api, err = httpapi.New(httpapi.Deps{
		Auth: s.auth, Settings: s.settings,
		Providers:    s.providers,
		Agents:       s.agents,
		Memories:     memories.New(w.db, w.ids, w.clock),
		Guardrails:   s.guardrails,
		Sessions:     s.sessions,
		Runs:         s.runs,
		Models:       s.models,
		Traces:       s.traces,
		Audit:        s.audit,
		Usage:        s.usage,
		Sandboxes:    s.sandboxes,
		MCP:          s.mcp,
		Tasks:        s.tasks,
		Workflows:    s.workflows,
		Triggers:     s.triggers,
		Skills:       s.skills,
		SkillImports: skills.NewImporter(s.skills, webfetch.New("agents-server/"+o.Version), s.settings, s.policies),
		Attachments:  s.attachments,
		Streams:      s.streams,
		Metrics:      s.watch.metrics.Handler(),
		Ready:        w.db.Ping,
		Version:      o.Version, UI: frontend.Assets(), Log: w.log,
	}, httpCfg)
	if err != nil {
		return err
	}
	w.bus = ws.New(ws.Deps{Auth: s.auth, Runs: s.runs, Budget: w.api, Streams: s.streams, Log: w.log})
	w.terminal = ws.NewTerminal(s.auth, s.sandboxes, w.api, s.streams, w.log)
	w.mcpServer = mcpserver.New(mcpserver.Deps{Auth: s.auth, Agents: s.agents, Sessions: s.sessions,
		Ask: ask.New(s.runs, s.sessions), Settings: s.settings, Budget: w.api, SessionIdle: o.MCPSessionIdle, Version: o.Version, Log: w.log})
	return nil
}

// start readies the workbench to serve and starts its background work.
// Runs a crash left running end before anything is served, and so do the
// tasks they were attempts of (their parents are owed a wake-up); paused
// runs get their streams back; enabled MCP servers connect in the
// background (their status says how).
func (w *Workbench) start(ctx context.Context) error {
	w.roll = replicas.NewRoll(replicas.RollDeps{Store: w.db, Runs: w.sweep, Tasks: w.tasks, Clock: w.clock, Log: w.log,
		Self: w.replica, Shared: w.peers != nil, FailoverAfter: w.opts.FailoverAfter, Standing: w.standing,
		Fenced: func() { w.runs.StopAll(domain.CancelDatabaseUnreachable) }})
	if err := w.roll.Join(ctx); err != nil {
		return err
	}
	if err := w.runs.ReopenPaused(ctx); err != nil {
		return err
	}
	if err := w.mcp.Start(ctx); err != nil {
		return err
	}
	w.startUpkeep()
	return nil
}

// openStore opens the Postgres database, the caller's, or the one in the
// data dir.
func openStore(ctx context.Context, o Options) (*sqlstore.DB, error) {
	if o.DatabaseURL != "" {
		if o.DB != nil {
			return nil, errs.E(errs.Validation, "Options: set DB or DatabaseURL, not both")
		}
		if !sqlstore.IsPostgresURL(o.DatabaseURL) {
			return nil, errs.E(errs.Validation, "Options: DatabaseURL must be a postgres:// URL (SQLite lives in DataDir)")
		}
		return sqlstore.OpenPostgres(ctx, o.DatabaseURL, o.Logger)
	}
	if o.DB != nil {
		return sqlstore.OpenWith(ctx, o.DB, o.Logger)
	}
	if o.DataDir == "" {
		return nil, errs.E(errs.Validation, "Options: set DataDir (or DB, or DatabaseURL) to say where the workbench keeps its data")
	}
	return sqlstore.Open(ctx, filepath.Join(o.DataDir, sqlstore.FileName), o.Logger)
}

// nativeTools indexes the program's tools.
func nativeTools(list []Tool) (tools.Natives, error) {
	ns := make([]tools.Native, len(list))
	for i, t := range list {
		ns[i] = t.native
	}
	return tools.NewNatives(ns)
}

// triggerStarter is what a trigger fires: workflow executions through the
// task manager, agent turns through the run engine.
type triggerStarter struct {
	*tasks.Manager
	*runs.Service
}

// ParseKey reads a sealing key as people write it down: 32 bytes in base64
// or hex (the text of a key file; surrounding space is ignored).
func ParseKey(text string) ([]byte, error) { return secrets.ParseKey(text) }

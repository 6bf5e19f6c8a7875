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
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/memories"
	"github.com/agents-server/agents-server/core/outbound"
	"github.com/agents-server/agents-server/core/providers"
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
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/frontend"
	"github.com/agents-server/agents-server/ports"
)

// Workbench is an open workbench: the ONE place concrete adapters meet the
// core. Its methods hand out the services; Handler serves it over HTTP.
type Workbench struct {
	opts          Options
	log           *slog.Logger
	db            *sqlstore.DB
	api           *httpapi.Server
	auth          *auth.Service
	settings      *settings.Service
	providers     *providers.Service
	agents        *agents.Service
	sessions      *sessions.Service
	runs          *runs.Service
	tasks         *tasks.Manager
	workflows     *workflows.Service
	triggers      *triggers.Service
	traces        *traces.Service
	attachments   *attachments.Service
	bus           *ws.Bus
	terminal      *ws.Terminal
	mcpServer     http.Handler
	streams       *livestreams.Registry
	sandboxes     *sandboxes.Service
	mcp           *mcp.Service
	docker        *dockersandbox.Runtime
	watch         *watchers // metrics, trace export
	token         string    // the bootstrap admin's token
	clock         ports.Clock
	replica       string         // this workbench's id on the replica roll
	shared        bool           // other replicas may share the store (Postgres)
	times         replicaTimings // of the roll, from Options.FailoverAfter
	peers         *peering       // joins the replicas (nil on SQLite)
	unlockReplica func()         // gives up the data dir's replica id
	stopLoops     context.CancelFunc
	loops         sync.WaitGroup // the upkeep loops
	closeOnce     sync.Once
	closeErr      error
}

// Open opens (creating when absent) and migrates the store, checks the
// sealing key against it, makes sure the bootstrap admin exists, ends the
// runs and tasks a crash left running, and starts the upkeep: MCP
// connections, cron triggers, pruning, idle sandbox stops. Nothing is
// served until the program mounts it. Errors are *errs.Error with a
// message a person can act on.
func Open(ctx context.Context, o Options) (_ *Workbench, err error) {
	o = o.withDefaults()
	log := o.Logger
	natives, err := nativeTools(o.Tools)
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "Options.Tools")
	}
	box, err := secrets.NewBox(o.SecretKey)
	if err != nil {
		return nil, err
	}
	db, err := openStore(ctx, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := secrets.CheckKey(ctx, box, db); err != nil {
		return nil, err
	}
	if box.Sealing() {
		log.Info(secrets.Describe(box))
	} else {
		log.Warn(secrets.Describe(box))
	}

	clock, idGen := o.Clock, o.IDs
	if clock == nil {
		clock = ports.SystemClock
	}
	if idGen == nil {
		idGen = ids.UUIDv7{}
	}
	replica, unlockReplica, err := replicaID(o, idGen)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			unlockReplica()
		}
	}()
	authSvc, err := auth.New(db, db, idGen, clock, log, o.PasswordParams)
	if err != nil {
		return nil, err
	}
	settingsSvc := settings.New(db, box, clock)
	// What a member configures reaches public addresses only, unless an
	// admin setting opens more; what an admin configures reaches anything.
	policies := outbound.New(settingsSvc, db)
	// Every open event stream and socket is registered by user and token,
	// so the auth service's changes reach the streams they invalidate.
	streams := livestreams.New(authSvc, settingsSvc, clock)
	// Replicas sharing the store (Postgres) are joined over its bus: each
	// hub relays what it numbers, run commands reach the replica running
	// the run, and a credential's streams close on every replica.
	eventHub := hub.New(o.Hub, clock, seqMarks{db: db, log: log})
	peers, err := joinPeers(db, replica, eventHub, idGen, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			peers.close()
		}
	}()
	authSvc.CloseStreamsWith(peers.streams(streams, authSvc))
	// A chatgpt_login provider signs in at OpenAI's auth server (or the
	// one the options name) and is called through the Codex bridge.
	var nativeTypes []string
	for _, m := range o.Models {
		if m.LLM == nil {
			return nil, errs.E(errs.Validation, "Options.Models: provider type %q has no LLM", m.Name)
		}
		nativeTypes = append(nativeTypes, m.Name)
	}
	providerSvc, err := providers.New(providers.Deps{Store: db, Box: box, IDs: idGen, Clock: clock,
		ChatGPT: chatgpt.New(chatgpt.Options{Issuer: o.ChatGPTAuthURL, HTTP: o.ChatGPTHTTP}), ChatGPTStore: db,
		NativeTypes: nativeTypes, Log: log})
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "Options.Models")
	}
	guardrailSvc := guardrails.New(db, idGen, clock)
	token, err := authSvc.Bootstrap(ctx, o.AdminToken)
	if err != nil {
		return nil, err
	}

	// The store keeps ssh:// daemons' pinned host keys, so a restart does
	// not trust a changed key on first use again.
	docker := dockersandbox.New(dockersandbox.Options{HostKeys: db, Clock: clock})
	// An e2b project's sandbox is recorded in its row before it is used.
	e2b := e2bsandbox.New(e2bsandbox.Options{Refs: db, HTTP: o.E2BHTTP, Now: clock.Now, Log: log})
	sandboxSvc := sandboxes.New(sandboxes.Deps{Store: db, Box: box, Settings: settingsSvc,
		Backends:        map[string]ports.SandboxBackend{docker.Type(): docker, e2b.Type(): e2b},
		ContainerAdmins: map[string]ports.ContainerAdmin{docker.Type(): docker},
		IDs:             idGen, Clock: clock, Log: log})
	mcpSvc := mcp.New(mcp.Deps{Store: db, Config: db, Box: box, Dialer: &mcpclient.Dialer{Version: o.Version}, Settings: settingsSvc,
		Outbound: policies, IDs: idGen, Clock: clock, Log: log})
	// The context report asks live MCP servers.
	sessionSvc := sessions.New(sessions.Deps{Store: db, Agents: db, Traces: db, Runs: db, MCP: mcpSvc, IDs: idGen, Clock: clock})
	// The task manager drives the run engine, and the engine tells it of
	// every run's end: the two are wired both ways here.
	workflowSvc := workflows.NewService(db, idGen, clock)
	skillSvc := skills.NewService(db, idGen, clock)
	taskMgr := tasks.New(tasks.Deps{Store: db, Approvals: db, Sessions: sessionSvc, Config: db, Settings: settingsSvc, Hub: eventHub,
		Workflows: workflowSvc, Projects: sandboxSvc, IDs: idGen, Clock: clock, Log: log})
	attachmentSvc := attachments.New(db, idGen, clock, o.Images)
	watch, err := newWatchers(ctx, o, eventHub, db, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			watch.close(ctx)
		}
	}()
	codex := openai.NewCodex(openai.CodexOptions{BaseURL: o.ChatGPTBackendURL, Credentials: providerSvc, HTTPClient: o.ChatGPTHTTP})
	runSvc := runs.New(runs.Deps{
		Hub: eventHub, Sessions: sessionSvc, Runs: db, Config: db, Providers: providerSvc,
		Settings: settingsSvc, Guardrails: guardrailSvc, Traces: db, Approvals: db, Sandboxes: sandboxSvc, Tasks: taskMgr,
		// Where tools come from, in the order they are offered (after the
		// built-ins): a new origin is one more toolset here.
		Toolsets: []tools.Toolset{natives, mcpSvc.Toolset(), taskMgr.Verbs(), workflowSvc.Toolset(),
			sandboxtools.NewToolset(sandboxSvc), skillSvc.Toolset()},
		Attachments: attachmentSvc, LLM: newModelRouter(codex, o.Models), Outbound: policies, IDs: idGen, Clock: clock, Log: log, Replica: replica, Peers: peers.runPeers(),
		Observer: watch.observer(),
	})
	taskMgr.Attach(runSvc)
	peers.start(runSvc)
	authSvc.StopWorkWith(runSvc) // a deleted account's runs stop first
	traceSvc := traces.New(db, sessionSvc, settingsSvc, clock)

	agentSvc := agents.New(agents.Deps{Store: db, IDs: idGen, Clock: clock, Skills: skillSvc.Exists, MCP: mcpSvc, Natives: natives,
		ProviderTypes: providerSvc.LookupType})
	triggerSvc := triggers.New(triggers.Deps{Store: db, Deliveries: db, Users: db, Config: db, Sessions: sessionSvc, Workflows: workflowSvc,
		Starter: triggerStarter{taskMgr, runSvc}, Box: box, IDs: idGen, Clock: clock, Location: time.Local, Log: log})
	// Ticks missed while the process was down are skipped before anything
	// could fire them: they are not replayed.
	if err := triggerSvc.SkipMissed(ctx); err != nil {
		return nil, err
	}
	httpCfg := o.HTTP
	httpCfg.BaseURL = o.BaseURL
	httpCfg.Observe = watch.metrics.Request
	api, err := httpapi.New(httpapi.Deps{
		Auth: authSvc, Settings: settingsSvc,
		Providers:    providerSvc,
		Agents:       agentSvc,
		Memories:     memories.New(db, idGen, clock),
		Guardrails:   guardrailSvc,
		Sessions:     sessionSvc,
		Runs:         runSvc,
		Traces:       traceSvc,
		Sandboxes:    sandboxSvc,
		MCP:          mcpSvc,
		Tasks:        taskMgr,
		Workflows:    workflowSvc,
		Triggers:     triggerSvc,
		Skills:       skillSvc,
		SkillImports: skills.NewImporter(skillSvc, webfetch.New("agents-server/"+o.Version), settingsSvc, policies),
		Attachments:  attachmentSvc,
		Streams:      streams,
		Metrics:      watch.metrics.Handler(),
		Ready:        db.Ping,
		Version:      o.Version, UI: frontend.Assets(), Log: log,
	}, httpCfg)
	if err != nil {
		return nil, err
	}
	w := &Workbench{
		opts: o, log: log, db: db, api: api, auth: authSvc, settings: settingsSvc, providers: providerSvc, agents: agentSvc,
		sessions: sessionSvc, runs: runSvc, tasks: taskMgr, workflows: workflowSvc, triggers: triggerSvc, traces: traceSvc,
		attachments: attachmentSvc, streams: streams, sandboxes: sandboxSvc, mcp: mcpSvc, docker: docker, token: token, watch: watch,
		clock: clock, replica: replica, shared: peers != nil, times: timings(o.FailoverAfter), peers: peers, unlockReplica: unlockReplica,
		bus:      ws.New(ws.Deps{Auth: authSvc, Runs: runSvc, Budget: api, Streams: streams, Log: log}),
		terminal: ws.NewTerminal(authSvc, sandboxSvc, api, streams, log),
		mcpServer: mcpserver.New(mcpserver.Deps{Auth: authSvc, Agents: agentSvc, Sessions: sessionSvc, Runs: runSvc,
			Settings: settingsSvc, Budget: api, SessionIdle: o.MCPSessionIdle, Version: o.Version, Log: log}),
	}
	// Runs a crash left running end before anything is served, and so do
	// the tasks they were attempts of (their parents are owed a wake-up);
	// paused runs get their streams back.
	if err := w.joinRoll(ctx); err != nil {
		return nil, err
	}
	if err := runSvc.ReopenPaused(ctx); err != nil {
		return nil, err
	}
	// Enabled MCP servers connect in the background; their status says how.
	if err := mcpSvc.Start(ctx); err != nil {
		return nil, err
	}
	w.startLoops()
	return w, nil
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

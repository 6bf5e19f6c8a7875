package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/agents-server/agents-server/adapters/sqlite"
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
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/skills"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/frontend"
	"github.com/agents-server/agents-server/ports"
)

// app is the composed process: the ONE place concrete adapters meet core.
type app struct {
	cfg       config
	log       *slog.Logger
	db        *sqlite.DB
	api       *httpapi.Server
	auth      *auth.Service
	settings  *settings.Service
	providers *providers.Service
	sessions  *sessions.Service
	runs      *runs.Service
	bus       *ws.Bus
	terminal  *ws.Terminal
	streams   *livestreams.Registry
	sandboxes *sandboxes.Service
	mcp       *mcp.Service
	docker    *dockersandbox.Runtime
	http      *http.Server
	ln        net.Listener
	watch     *watchers // metrics, trace export
	token     string    // the bootstrap admin's token for the ready line
	stopLoops context.CancelFunc
	loops     sync.WaitGroup // the upkeep loops
}

// newApp opens the store, checks the secret key, makes sure the bootstrap
// admin exists, and binds the listener. Nothing is served until serve.
func newApp(ctx context.Context, cfg config, log *slog.Logger) (_ *app, err error) {
	box, err := loadSecretBox(cfg)
	if err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, sqlite.FileName), log)
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

	clock, idGen := ports.SystemClock, ids.UUIDv7{}
	if cfg.Clock != nil {
		clock = cfg.Clock
	}
	authSvc, err := auth.New(db, db, idGen, clock, log, cfg.PasswordParams)
	if err != nil {
		return nil, err
	}
	settingsSvc := settings.New(db, box, clock)
	// Every open event stream and socket is registered by user and token,
	// so the auth service's changes reach the streams they invalidate.
	streams := livestreams.New(authSvc, settingsSvc, clock)
	authSvc.CloseStreamsWith(streams)
	// A chatgpt_login provider signs in at OpenAI's auth server (or the
	// one --chatgpt-auth-url names) and is called through the Codex bridge.
	providerSvc := providers.New(db, box, idGen, clock).
		WithChatGPT(chatgpt.New(chatgpt.Options{Issuer: cfg.ChatGPTAuthURL, HTTP: cfg.ChatGPTHTTP}), db)
	sessionSvc := sessions.New(db, db, db, db, idGen, clock)
	guardrailSvc := guardrails.New(db, idGen, clock)
	token, err := authSvc.Bootstrap(ctx, cfg.Token)
	if err != nil {
		return nil, err
	}

	// The store keeps ssh:// daemons' pinned host keys, so a restart does
	// not trust a changed key on first use again.
	docker := dockersandbox.New(dockersandbox.Options{HostKeys: db, Clock: clock})
	// An e2b project's sandbox is recorded in its row before it is used.
	e2b := e2bsandbox.New(e2bsandbox.Options{Refs: db, HTTP: cfg.E2BHTTP, Now: clock.Now, Log: log})
	sandboxSvc := sandboxes.New(sandboxes.Deps{Store: db, Box: box, Settings: settingsSvc,
		Backends:        map[string]ports.SandboxBackend{docker.Type(): docker, e2b.Type(): e2b},
		ContainerAdmins: map[string]ports.ContainerAdmin{docker.Type(): docker},
		IDs:             idGen, Clock: clock, Log: log})
	mcpSvc := mcp.New(mcp.Deps{Store: db, Config: db, Box: box, Dialer: &mcpclient.Dialer{Version: version()}, IDs: idGen, Clock: clock, Log: log})
	sessionSvc.WithMCP(mcpSvc) // the context report asks live servers
	eventHub := hub.New(cfg.Hub, clock)
	// The task manager drives the run engine, and the engine tells it of
	// every run's end: the two are wired both ways here.
	workflowSvc := workflows.NewService(db, idGen, clock)
	skillSvc := skills.NewService(db, idGen, clock)
	taskMgr := tasks.New(tasks.Deps{Store: db, Approvals: db, Sessions: sessionSvc, Config: db, Settings: settingsSvc, Hub: eventHub,
		Workflows: workflowSvc, Projects: sandboxSvc, IDs: idGen, Clock: clock, Log: log})
	attachmentSvc := attachments.New(db, idGen, clock)
	watch, err := newWatchers(ctx, cfg, eventHub, db, log)
	if err != nil {
		return nil, err
	}
	runSvc := runs.New(runs.Deps{
		Hub: eventHub, Sessions: sessionSvc, Runs: db, Config: db, Providers: providerSvc,
		Settings: settingsSvc, Guardrails: guardrailSvc, Traces: db, Approvals: db, Sandboxes: sandboxSvc, MCP: mcpSvc, Tasks: taskMgr,
		Authoring:   workflowSvc,
		Skills:      skillSvc,
		Attachments: attachmentSvc, LLM: newModelRouter(openai.NewCodex(openai.CodexOptions{BaseURL: cfg.ChatGPTBackendURL, Credentials: providerSvc, HTTPClient: cfg.ChatGPTHTTP})), IDs: idGen, Clock: clock, Log: log,
		Observer: watch.observer(),
	})
	taskMgr.Attach(runSvc)
	authSvc.StopWorkWith(runSvc) // a deleted account's runs stop first
	traceSvc := traces.New(db, sessionSvc, settingsSvc, clock)
	// Runs a crash left running end before anything is served, and so do
	// the tasks they were attempts of (their parents are owed a wake-up).
	if err := runSvc.RecoverOrphans(ctx); err != nil {
		return nil, err
	}
	if err := taskMgr.Recover(ctx); err != nil {
		return nil, err
	}

	agentSvc := agents.New(db, idGen, clock, skillSvc.Exists).WithMCP(mcpSvc)
	triggerSvc := triggers.New(triggers.Deps{Store: db, Users: db, Config: db, Sessions: sessionSvc, Workflows: workflowSvc,
		Starter: triggerStarter{taskMgr, runSvc}, Box: box, IDs: idGen, Clock: clock, Location: time.Local, Log: log})
	// Ticks missed while the process was down are skipped before anything
	// could fire them: they are not replayed.
	if err := triggerSvc.SkipMissed(ctx); err != nil {
		return nil, err
	}
	httpCfg := cfg.HTTP
	httpCfg.BaseURL = cfg.BaseURL
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
		SkillImports: skills.NewImporter(skillSvc, webfetch.New("agents-server/"+version()), settingsSvc),
		Attachments:  attachmentSvc,
		Streams:      streams,
		Metrics:      watch.metrics.Handler(),
		Ready:        db.Ping,
		Version:      version(), UI: frontend.Assets(), Log: log,
	}, httpCfg)
	if err != nil {
		return nil, err
	}
	bus := ws.New(ws.Deps{Auth: authSvc, Runs: runSvc, Budget: api, Streams: streams, Log: log})
	terminal := ws.NewTerminal(authSvc, sandboxSvc, api, streams, log)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen on %s", cfg.Addr)
	}
	a := &app{
		cfg: cfg, log: log, db: db, api: api, auth: authSvc, settings: settingsSvc, providers: providerSvc, sessions: sessionSvc,
		runs: runSvc, bus: bus, terminal: terminal, streams: streams, sandboxes: sandboxSvc, mcp: mcpSvc, docker: docker, ln: ln, token: token,
		watch: watch,
		http: &http.Server{
			Handler: api.BoundBodyReads(routes(api.Handler(), bus, terminal, mcpserver.New(mcpserver.Deps{
				Auth: authSvc, Agents: agentSvc, Sessions: sessionSvc, Runs: runSvc, Settings: settingsSvc, Version: version(), Log: log}))),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
	}
	// Enabled MCP servers connect in the background; their status says how.
	if err := mcpSvc.Start(ctx); err != nil {
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	a.stopLoops = cancel
	// The wake-ups owed when the process stopped are paid now that
	// everything is wired.
	go taskMgr.Drain(loopCtx)
	a.loops.Add(4)
	go func() {
		defer a.loops.Done()
		every := cfg.TriggerEvery
		if every <= 0 {
			every = time.Second
		}
		a.every(loopCtx, every, triggerSvc.Tick) // fires the due cron ticks
	}()
	go a.maintain(loopCtx, authSvc, traceSvc, runSvc, taskMgr, attachmentSvc)
	go a.idleStops(loopCtx)
	go a.expireStreams(loopCtx)
	return a, nil
}

// triggerStarter is what a trigger fires: workflow executions through the
// task manager, agent turns through the run engine.
type triggerStarter struct {
	*tasks.Manager
	*runs.Service
}

// loadSecretBox reads the sealing key from --secret-key-file or
// AGENTS_SECRET_KEY; neither means plaintext mode.
func loadSecretBox(cfg config) (*secrets.Box, error) {
	text := cfg.SecretKey
	if cfg.SecretKeyFile != "" {
		b, err := os.ReadFile(cfg.SecretKeyFile)
		if err != nil {
			return nil, errs.Wrap(errs.Unavailable, err, "read --secret-key-file %s", cfg.SecretKeyFile)
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return secrets.NewBox(nil)
	}
	key, err := secrets.ParseKey(text)
	if err != nil {
		return nil, err
	}
	return secrets.NewBox(key)
}

// maintain runs the periodic upkeep until ctx ends: now, then hourly.
func (a *app) maintain(ctx context.Context, authSvc *auth.Service, traceSvc *traces.Service, runSvc *runs.Service, taskMgr *tasks.Manager,
	attachmentSvc *attachments.Service) {
	defer a.loops.Done()
	upkeep := func(ctx context.Context) {
		n, err := authSvc.PruneExpiredTokens(ctx)
		a.logSweep(ctx, n, err, "pruning expired tokens failed", "pruned expired tokens")
		n, err = runSvc.ReapApprovals(ctx)
		a.logSweep(ctx, n, err, "expiring approvals failed", "expired approvals")
		n, err = traceSvc.Prune(ctx)
		a.logSweep(ctx, n, err, "pruning old traces failed", "pruned old traces")
		n, err = taskMgr.Prune(ctx)
		a.logSweep(ctx, n, err, "pruning task leftovers failed", "pruned settled wake-ups and orphan task sessions")
		n, err = attachmentSvc.Prune(ctx)
		a.logSweep(ctx, n, err, "pruning unsent attachments failed", "pruned attachments no message carries")
	}
	upkeep(ctx)
	a.every(ctx, time.Hour, upkeep)
}

// expireStreams closes, every livestreams.SweepEvery, the streams whose
// token expired while they were open; revocations close theirs at once,
// but an expiry is a moment nobody announces.
func (a *app) expireStreams(ctx context.Context) {
	defer a.loops.Done()
	a.every(ctx, livestreams.SweepEvery, func(ctx context.Context) {
		n, err := a.streams.Sweep(ctx)
		a.logSweep(ctx, n, err, "closing streams of expired tokens failed", "closed streams of expired tokens")
	})
}

// idleStops stops the project instances nobody used for
// sandbox_idle_minutes, checking every minute; first it notes the ones a
// previous process left running.
func (a *app) idleStops(ctx context.Context) {
	defer a.loops.Done()
	if err := a.sandboxes.Adopt(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("noting running sandbox instances failed", "err", err)
	}
	a.every(ctx, time.Minute, func(ctx context.Context) {
		n, err := a.sandboxes.SweepIdle(ctx)
		a.logSweep(ctx, n, err, "idle sandbox stop failed", "stopped idle sandbox instances")
	})
}

// every calls sweep once per interval until ctx ends.
func (a *app) every(ctx context.Context, interval time.Duration, sweep func(context.Context)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sweep(ctx)
	}
}

// logSweep logs how an upkeep pass went: a failure (unless the process is
// stopping) or how many things it handled.
func (a *app) logSweep(ctx context.Context, n int, err error, failed, done string) {
	if err != nil && ctx.Err() == nil {
		a.log.Warn(failed, "err", err)
	} else if err == nil && n > 0 {
		a.log.Info(done, "count", n)
	}
}

// URL is the address the server answers on.
func (a *app) URL() string {
	addr := a.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

// ReadyLine is the one line a person clicks to sign in: on --base-url
// when set (the origin people reach the server at, behind a proxy), else
// on the listening address.
func (a *app) ReadyLine() string {
	origin := a.URL()
	if a.cfg.BaseURL != "" {
		origin = a.cfg.BaseURL
	}
	return fmt.Sprintf("agents-server ready: %s/#token=%s", origin, a.token)
}

// serve answers requests until shutdown; it returns nil after a shutdown.
func (a *app) serve() error {
	if err := a.http.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// routes puts the WebSocket bus beside the echo server; everything else is
// echo's (API, health, UI).
func routes(api http.Handler, bus *ws.Bus, terminal *ws.Terminal, mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", bus)
	mux.Handle("/ws/terminal", terminal)
	mux.Handle(mcpserver.Path, mcp)
	mux.Handle("/", api)
	return mux
}

// shutdown drains: new work is refused with 503 while live runs and
// requests in flight finish (together bounded by DrainTimeout; runs still
// going then are cancelled), every stream and socket is closed, then the
// listener, the upkeep and the store.
func (a *app) shutdown() error {
	a.api.BeginDrain()
	a.runs.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	a.runs.Shutdown(ctx)
	a.bus.CloseAll()
	a.terminal.CloseAll()
	if err := a.api.WaitIdle(ctx); err != nil {
		a.log.Warn("drain timed out; closing with requests in flight", "in_flight", a.api.InFlight())
	}
	cancel()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), time.Second)
	defer cancelClose()
	if err := a.http.Shutdown(closeCtx); err != nil {
		a.http.Close()
	}
	a.stopLoops()
	a.loops.Wait()
	a.watch.close(closeCtx)
	a.docker.Close()
	a.mcp.Close()
	return a.db.Close()
}

// Package httpapi is the HTTP edge of agents-server: echo, the route table
// that also builds the OpenAPI document, the platform rules every endpoint
// obeys (error envelope, body cap, strict bodies, rate budgets, bearer auth,
// drain) and the embedded UI.
package httpapi

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/memories"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/skills"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/core/usage"
	"github.com/agents-server/agents-server/core/workflows"
)

// Deps are the core services the HTTP edge calls.
type Deps struct {
	Auth       *auth.Service
	Settings   *settings.Service
	Providers  *providers.Service
	Agents     *agents.Service
	Memories   *memories.Service
	Guardrails *guardrails.Service
	Sessions   *sessions.Service
	Runs       *runs.Service
	// Models lists providers' models, tests providers, replays traced
	// calls and compacts sessions on request.
	Models *models.Service
	Traces *traces.Service
	// Audit lists and exports the audit log.
	Audit *audit.Service
	// Usage reports usage, keeps the price table and the budgets.
	Usage     *usage.Service
	Sandboxes *sandboxes.Service
	MCP       *mcp.Service
	Tasks     *tasks.Manager
	Workflows *workflows.Service
	Triggers  *triggers.Service
	Skills    *skills.Service
	// SkillImports reads skills from GitHub and raw URLs.
	SkillImports *skills.Importer
	// Attachments keeps the images people send with messages.
	Attachments *attachments.Service
	// Streams registers every open event stream, so a revoked credential
	// ends it and the per-user cap bounds them.
	Streams *livestreams.Registry
	// Metrics serves GET /metrics (to admins); nil answers 404.
	Metrics http.Handler
	// Ready reports whether the store answers, for /health.
	Ready   func(context.Context) error
	Version string
	// UI is the built frontend; it must hold index.html and docs.html.
	UI  fs.FS
	Log *slog.Logger
}

// Config tunes the platform rules.
type Config struct {
	BodyLimit int64
	// BodyReadTimeout bounds the time to receive a request body (see
	// BoundBodyReads); 0 is DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	RateLimits      RateLimits
	// BaseURL is --base-url: the origin people reach the server at, for
	// links handed to browsers (OAuth redirects). "" uses the request's
	// own scheme and host — never forwarding headers.
	BaseURL string
	// Observe, when set, hears every request: its method, the route
	// table's path it matched ("" for none), status and duration.
	Observe func(method, route string, status int, took time.Duration)
}

// DefaultConfig is what the binary runs with.
func DefaultConfig() Config {
	return Config{BodyLimit: DefaultBodyLimit, BodyReadTimeout: DefaultBodyReadTimeout, RateLimits: DefaultRateLimits}
}

// Server is the HTTP handler of the whole API and UI.
type Server struct {
	deps     Deps
	cfg      Config
	log      *slog.Logger
	echo     *echo.Echo
	routes   []Route
	limits   *limiter
	draining atomic.Bool
	inflight atomic.Int64
	openapi  []byte
}

// New builds the server: every route of the table registered with its
// rules, and the OpenAPI document built from the same table.
func New(deps Deps, cfg Config) (*Server, error) {
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	s := &Server{deps: deps, cfg: cfg, log: deps.Log, limits: newLimiter(cfg.RateLimits)}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(deps.Log)
	e.Use(securityHeaders, s.logRequests, compress, recoverPanics, s.trackInFlight)
	s.echo = e
	s.routes = s.table()
	for _, r := range s.routes {
		e.Add(r.Method, r.Path, r.handler(r), s.routeMiddleware(r)...)
	}
	doc, err := BuildOpenAPI(s.routes)
	if err != nil {
		return nil, err
	}
	if s.openapi, err = MarshalOpenAPI(doc); err != nil {
		return nil, err
	}
	s.mountInfra()
	return s, nil
}

// mountInfra adds the routes that are not API operations: the answer for
// anything else under /api (405 when the path exists with other methods,
// else 404), and the UI for every other path.
func (s *Server) mountInfra() {
	for _, p := range InfraPaths {
		switch p {
		case "/*":
			s.echo.GET(p, s.serveUI)
			s.echo.HEAD(p, s.serveUI)
			continue
		case DocsPath:
			s.echo.GET(p, s.serveDocs)
			s.echo.HEAD(p, s.serveDocs)
			continue
		}
		s.echo.Any(p, s.unmatchedAPI)
	}
}

// unmatchedAPI answers an /api request no operation took.
func (s *Server) unmatchedAPI(c echo.Context) error {
	var allow []string
	for _, r := range s.routes {
		if matchPath(r.Path, c.Request().URL.Path) && !slices.Contains(allow, r.Method) {
			allow = append(allow, r.Method)
		}
	}
	if len(allow) == 0 {
		return echo.ErrNotFound
	}
	c.Response().Header().Set("Allow", strings.Join(allow, ", "))
	return echo.ErrMethodNotAllowed
}

// matchPath reports whether an echo route path (with :params) matches a
// request path.
func matchPath(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], ":") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// InfraPaths are the echo paths served outside the route table: /api/...
// that matches no operation (a 404 envelope, including the unversioned
// /api), the API reference page, and the UI.
var InfraPaths = []string{"/api", "/api/*", DocsPath, "/*"}

// Handler returns the http.Handler to serve.
func (s *Server) Handler() http.Handler { return s.echo }

// Routes returns the route table, for documentation and tests.
func (s *Server) Routes() []Route { return s.routes }

// EchoRoutes lists what echo actually serves, for the drift test.
func (s *Server) EchoRoutes() []*echo.Route { return s.echo.Routes() }

// OpenAPIDocument is the YAML document served at /api/v1/openapi.yaml.
func (s *Server) OpenAPIDocument() []byte { return s.openapi }

// BeginDrain makes the server refuse new work with 503 while requests in
// flight finish.
func (s *Server) BeginDrain() { s.draining.Store(true) }

// Draining reports whether BeginDrain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// InFlight is the number of requests being served.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// WaitIdle waits until no request is in flight, or ctx ends. It polls: a
// drain waits once, and reads may keep arriving while it does, which rules
// out a WaitGroup.
func (s *Server) WaitIdle(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

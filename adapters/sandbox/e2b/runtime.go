// Package e2b runs project instances on any service speaking the E2B API —
// E2B's own cloud, a self-hosted E2B, or a compatible service — through
// clients generated from the service's specifications (package gen). Each
// project is one E2B sandbox: the sandbox IS the storage, so its id is
// recorded (ports.InstanceRefStore) before anything uses it; stop pauses
// it, the next use connects (resumes) it with the lease refreshed, reclaim
// kills it. Commands, terminals and files go over the in-sandbox daemon's
// process and filesystem services and its file API, always with the
// per-sandbox access token (every sandbox is created secure).
package e2b

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The daemon's port, the sandbox user commands run as, and where a
// project's tree lives in its sandbox.
const (
	envdPort     = 49983
	runAs        = "root"
	workspaceDir = "/workspace"
	// defaultDomain and defaultAPIURL are E2B's own service.
	defaultDomain = "e2b.app"
)

// Metadata keys the backend tags its sandboxes with, so it can find the
// ones of a project (or of a sandbox row) on the service.
const (
	metaProject = "agents_project"
	metaSandbox = "agents_sandbox"
	metaTest    = "agents_test"
)

// Options configure a Runtime.
type Options struct {
	// Refs records each project's instance before it is used.
	Refs ports.InstanceRefStore
	// HTTP makes every call (control plane and daemon); nil: a client
	// with the default transport (system roots, HTTPS_PROXY honoured) and
	// no overall timeout, since commands and terminals stream.
	HTTP *http.Client
	// Now is the clock the lease refreshes are timed by; nil: time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Runtime is the e2b sandbox backend.
type Runtime struct {
	o Options

	mu    sync.Mutex
	live  map[string]*conn       // project id → its connected instance
	known map[string]string      // project id → the sandbox id it last had (kept over a stop)
	locks map[string]*sync.Mutex // project id → serialises create/connect
}

// New returns the e2b backend.
func New(o Options) *Runtime {
	if o.HTTP == nil {
		o.HTTP = &http.Client{Transport: http.DefaultTransport}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Runtime{o: o, live: map[string]*conn{}, known: map[string]string{}, locks: map[string]*sync.Mutex{}}
}

var _ ports.SandboxBackend = (*Runtime)(nil)

// Type implements ports.SandboxBackend.
func (*Runtime) Type() string { return domain.SandboxE2B }

// Supports implements ports.SandboxBackend: ports have public hosts; there
// is no rebuild, since the instance is the storage.
func (*Runtime) Supports() domain.SandboxSupports {
	return domain.SandboxSupports{PublicHost: true}
}

// Rebuild implements ports.SandboxBackend: refused with the way out.
func (*Runtime) Rebuild(_ context.Context, _ ports.ProjectInstance) error {
	return errs.E(errs.Validation, "an e2b sandbox is its own storage and cannot be rebuilt: export the project, then create a new one")
}

// Where implements ports.SandboxBackend.
func (r *Runtime) Where(in ports.ProjectInstance) string {
	c, err := configOf(in.Target)
	if err != nil {
		return "an e2b sandbox"
	}
	host := c.apiURL
	if u, err := url.Parse(c.apiURL); err == nil && u.Host != "" {
		host = u.Host
	}
	ref := r.refOf(in)
	if ref == "" {
		return "no e2b sandbox yet (template " + c.template + " at " + host + ")"
	}
	return "e2b sandbox " + ref + " (template " + c.template + ") at " + host
}

// lock is the per-project mutex create, connect and reclaim hold.
func (r *Runtime) lock(projectID string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.locks[projectID]
	if m == nil {
		m = &sync.Mutex{}
		r.locks[projectID] = m
	}
	return m
}

// cached is the project's connected instance, or nil.
func (r *Runtime) cached(projectID string) *conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[projectID]
}

func (r *Runtime) remember(projectID string, c *conn) {
	r.mu.Lock()
	r.live[projectID] = c
	r.known[projectID] = c.id
	r.mu.Unlock()
}

// disconnect drops the project's connection (a paused sandbox needs a new
// one), keeping which sandbox it is.
func (r *Runtime) disconnect(projectID string) {
	r.mu.Lock()
	delete(r.live, projectID)
	r.mu.Unlock()
}

// forget drops everything known of the project's sandbox.
func (r *Runtime) forget(projectID string) {
	r.mu.Lock()
	delete(r.live, projectID)
	delete(r.known, projectID)
	r.mu.Unlock()
}

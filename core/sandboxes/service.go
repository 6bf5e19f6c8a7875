// Package sandboxes manages where project trees live and what works on
// them: sandbox rows (host configuration), projects (personal working
// trees), and the live use of project instances by runs and terminals —
// reference counts, deferred stops, idle stops, severing terminals.
package sandboxes

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Deps are what the service works with.
type Deps struct {
	Store    ports.ProjectStore
	Box      *secrets.Box
	Settings *settings.Service
	// Backends run the instances of each sandbox type they are keyed by;
	// a type without one is stored and refused wherever it would run.
	Backends map[string]ports.SandboxBackend
	// ContainerAdmins are the daemon-level calls of the types whose
	// instances are containers (the container routes).
	ContainerAdmins map[string]ports.ContainerAdmin
	IDs             ports.IDs
	Clock           ports.Clock
	Log             *slog.Logger
}

// Service is the sandbox and project surface.
type Service struct {
	d Deps

	mu  sync.Mutex
	use map[string]*usage // project id → live use
}

// New returns a Service.
func New(d Deps) *Service {
	return &Service{d: d, use: map[string]*usage{}}
}

// backend is the backend running a sandbox's instances: refused by name
// for a type this server has none for, the same fact Supports reports as
// runs, so what clients are offered and what is refused agree.
func (s *Service) backend(sb domain.Sandbox) (ports.SandboxBackend, error) {
	if b := s.d.Backends[sb.Type]; b != nil {
		return b, nil
	}
	return nil, errs.E(errs.Validation, "sandbox %q is %s, which this server cannot run yet: only %s sandboxes run projects",
		sb.Name, sb.Type, strings.Join(s.runnableTypes(), ", "))
}

// runnableTypes are the types with a backend, sorted.
func (s *Service) runnableTypes() []string {
	out := make([]string, 0, len(s.d.Backends))
	for t := range s.d.Backends {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Supports are a sandbox type's capability flags: the backend's when the
// server has one (runs), else the type's descriptor (does not run).
func (s *Service) Supports(typ string) domain.SandboxSupports {
	if b := s.d.Backends[typ]; b != nil {
		sup := b.Supports()
		sup.Runs = true
		return sup
	}
	sup := domain.SandboxTypes[typ].Supports
	sup.Runs = false
	return sup
}

// target opens a sandbox's secrets into the form its backend is handed.
func (s *Service) target(sb domain.Sandbox) (ports.SandboxTarget, error) {
	open := sb.WithOwnConfig()
	for field, v := range open.Secrets() {
		plain, err := s.d.Box.Open(secretPlace(sb.ID, field), *v)
		if err != nil {
			return ports.SandboxTarget{}, err
		}
		*v = plain
	}
	return ports.SandboxTarget{SandboxID: sb.ID, Type: sb.Type, Config: open.Config()}, nil
}

// instance is a project's instance on its sandbox, environment opened.
func (s *Service) instance(p domain.Project, sb domain.Sandbox) (ports.ProjectInstance, error) {
	t, err := s.target(sb)
	if err != nil {
		return ports.ProjectInstance{}, err
	}
	env := map[string]string{}
	for _, v := range p.Env {
		plain, err := s.d.Box.Open(envPlace(p.ID, v.Name), v.Value)
		if err != nil {
			return ports.ProjectInstance{}, err
		}
		env[v.Name] = plain
	}
	return ports.ProjectInstance{ProjectID: p.ID, Name: p.InstanceName(), StorageName: p.StorageName(), Env: env,
		Generation: p.Generation, InstanceRef: p.InstanceRef, Target: t}, nil
}

// loadInstance reads a project and its sandbox and builds the instance.
func (s *Service) loadInstance(ctx context.Context, projectID string) (domain.Project, domain.Sandbox, ports.ProjectInstance, error) {
	p, err := s.d.Store.FindProject(ctx, projectID)
	if err != nil {
		return p, domain.Sandbox{}, ports.ProjectInstance{}, err
	}
	sb, err := s.d.Store.FindSandbox(ctx, p.SandboxID)
	if err != nil {
		return p, sb, ports.ProjectInstance{}, err
	}
	if _, err := s.backend(sb); err != nil {
		return p, sb, ports.ProjectInstance{}, err
	}
	in, err := s.instance(p, sb)
	return p, sb, in, err
}

func secretPlace(sandboxID, field string) string {
	return secrets.Place("sandboxes", "config", field, sandboxID)
}

func envPlace(projectID, name string) string {
	return secrets.Place("projects", "env", projectID, name)
}

// Package sandboxes manages where project trees live and what works on
// them: sandbox rows (host configuration), projects (personal working
// trees), and the live use of project instances by runs and terminals —
// reference counts, deferred stops, idle stops, severing terminals.
package sandboxes

import (
	"context"
	"log/slog"
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
	// Docker runs the instances of docker sandboxes.
	Docker ports.SandboxRuntime
	IDs    ports.IDs
	Clock  ports.Clock
	Log    *slog.Logger
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

// runtime is the backend running a sandbox's instances: refused by name for
// a type this build cannot run yet — the one its descriptor does not say
// runs, so what clients are offered and what is refused agree.
func (s *Service) runtime(sb domain.Sandbox) (ports.SandboxRuntime, error) {
	if domain.SandboxTypes[sb.Type].Supports.Runs && sb.Type == domain.SandboxDocker && s.d.Docker != nil {
		return s.d.Docker, nil
	}
	return nil, errs.E(errs.Validation, "sandbox %q is %s, which this server cannot run yet: only docker sandboxes run projects", sb.Name, sb.Type)
}

// target opens a docker sandbox's secrets into the runtime's form.
func (s *Service) target(sb domain.Sandbox) (ports.DockerTarget, error) {
	d := sb.Docker
	if d == nil {
		return ports.DockerTarget{}, errs.E(errs.Validation, "sandbox %q is not a docker sandbox", sb.Name)
	}
	t := ports.DockerTarget{SandboxID: sb.ID, Host: d.Host, Image: d.Image, Runtime: d.Runtime, User: d.User, Network: d.Network,
		MemoryMB: d.MemoryMB, CPUs: d.CPUs}
	if t.MemoryMB == 0 {
		t.MemoryMB = domain.DefaultMemoryMB
	}
	if t.CPUs == 0 {
		t.CPUs = domain.DefaultCPUs
	}
	var err error
	if t.SSHPassword, err = s.d.Box.Open(secretPlace(sb.ID, "ssh_password"), d.SSHPassword); err != nil {
		return t, err
	}
	if t.SSHKey, err = s.d.Box.Open(secretPlace(sb.ID, "ssh_key"), d.SSHKey); err != nil {
		return t, err
	}
	return t, nil
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
	return ports.ProjectInstance{ProjectID: p.ID, Container: p.ContainerName(), Volume: p.VolumeName(), Env: env,
		Generation: p.Generation, Target: t}, nil
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
	if _, err := s.runtime(sb); err != nil {
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

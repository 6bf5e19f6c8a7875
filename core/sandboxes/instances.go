package sandboxes

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// usage is the live use of one project's instance.
type usage struct {
	ensure    sync.Mutex // one Ensure (create, replace, start) at a time
	users     int        // leases held by runs, terminals, exports
	leases    map[*Lease]struct{}
	terminals map[*Lease]struct{}
	programs  map[*Lease]struct{} // stdio MCP servers' programs, severed as terminals are
	doomed    bool                // a stop was asked while in use: stop when the last lease goes
	lastUsed  time.Time           // zero: not known to be running
	// gen is the generation the container was last ensured for (0: not
	// known). A newer one replaces it only once nobody holds it.
	gen int64
}

// heldByOthers reports whether a lease other than l still holds the
// instance (a severed terminal is on its way out and does not count); s.mu
// is held.
func (u *usage) heldByOthers(l *Lease) bool {
	for o := range u.leases {
		if o == l {
			continue
		}
		select {
		case <-o.severed:
		default:
			return true
		}
	}
	return false
}

// Purposes of a lease.
const (
	ForRun      = "run"
	ForTerminal = "terminal"
	ForExport   = "export"
	ForProgram  = "mcp" // a stdio MCP server's program
)

// Lease is one user's hold on a running project instance: while any lease
// is held the instance is neither idle-stopped nor stopped by hand.
type Lease struct {
	s       *Service
	project domain.Project
	sandbox domain.Sandbox
	inst    ports.ProjectInstance
	rt      ports.SandboxBackend
	purpose string
	severed chan struct{}
	once    sync.Once
}

func (s *Service) usageOf(projectID string) *usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.use[projectID]
	if u == nil {
		u = &usage{leases: map[*Lease]struct{}{}, terminals: map[*Lease]struct{}{}, programs: map[*Lease]struct{}{}}
		s.use[projectID] = u
	}
	return u
}

// Acquire makes a project's instance run and holds it for purpose. A
// terminal counts against max_terminals_per_sandbox. When the project's
// generation moved on (its environment or its sandbox changed) while other
// work holds the instance, the new lease joins the running container
// rather than replacing it under a command in flight; its commands get the
// new environment all the same, and the container is replaced by the first
// acquire that finds nobody holding it. Returns not_found, validation (a
// type this build cannot run), conflict (terminal cap) or upstream (the
// daemon).
func (s *Service) Acquire(ctx context.Context, projectID, purpose string) (*Lease, error) {
	p, sb, in, err := s.loadInstance(ctx, projectID)
	if err != nil {
		return nil, err
	}
	rt, _ := s.backend(sb)
	l := &Lease{s: s, project: p, sandbox: sb, inst: in, rt: rt, purpose: purpose, severed: make(chan struct{})}
	max := 0
	if purpose == ForTerminal {
		if max, err = s.d.Settings.Int(ctx, settings.KeyMaxTerminalsPerSandbox); err != nil {
			return nil, err
		}
	}
	u := s.usageOf(projectID)
	s.mu.Lock()
	if purpose == ForTerminal {
		if n := s.terminalsOn(sb.ID); n >= max {
			s.mu.Unlock()
			return nil, errs.E(errs.Conflict, "%d terminal(s) are open on sandbox %q, its limit (max_terminals_per_sandbox)", n, sb.Name)
		}
		u.terminals[l] = struct{}{}
	}
	if purpose == ForProgram {
		u.programs[l] = struct{}{}
	}
	u.users++
	u.leases[l] = struct{}{}
	join := u.gen != 0 && u.gen != in.Generation && u.heldByOthers(l)
	wasUsed := u.lastUsed
	s.mu.Unlock()
	if !join {
		u.ensure.Lock()
		err = rt.Ensure(ctx, in)
		if err == nil {
			s.mu.Lock()
			u.gen = in.Generation
			s.mu.Unlock()
		}
		u.ensure.Unlock()
		if err != nil {
			l.Release()
			// An instance that did not start was not used: the idle
			// stop must not count it as running.
			s.mu.Lock()
			if u.users == 0 {
				u.lastUsed = wasUsed
			}
			s.mu.Unlock()
			return nil, err
		}
	}
	s.mu.Lock()
	u.lastUsed = s.d.Clock.Now()
	s.mu.Unlock()
	return l, nil
}

// HoldForProgram makes a project's instance run and holds it for a stdio
// MCP server's program, which runs in it for as long as the server is
// connected: the instance is not idle-stopped meanwhile, and a stop by
// hand waits for the server to be disabled. The lease is severed, as a
// terminal's is, when the project's environment or sandbox changes or
// the project is deleted.
func (s *Service) HoldForProgram(ctx context.Context, projectID string) (*Lease, error) {
	return s.Acquire(ctx, projectID, ForProgram)
}

// terminalsOn counts the open terminals on a sandbox; s.mu is held.
func (s *Service) terminalsOn(sandboxID string) int {
	n := 0
	for _, u := range s.use {
		for l := range u.terminals {
			if l.sandbox.ID == sandboxID {
				n++
			}
		}
	}
	return n
}

// Release ends the hold; the last one ends a deferred stop. Idempotent.
func (l *Lease) Release() {
	l.once.Do(func() {
		s := l.s
		s.mu.Lock()
		u := s.use[l.project.ID]
		stop := false
		if u != nil {
			delete(u.terminals, l)
			delete(u.programs, l)
			delete(u.leases, l)
			u.users--
			u.lastUsed = s.d.Clock.Now()
			if u.users == 0 && u.doomed {
				u.doomed, stop = false, true
			}
		}
		s.mu.Unlock()
		if stop {
			s.stopNow(l.project.ID, l.rt, l.inst)
		}
	})
}

// Severed is closed when the lease must end now: the project's environment
// or its sandbox's content changed, or the project was deleted. Terminals
// close on it; runs keep the container they hold (see Acquire).
func (l *Lease) Severed() <-chan struct{} { return l.severed }

// Project is the project the lease holds.
func (l *Lease) Project() domain.Project { return l.project }

// Sandbox is the sandbox the project lives on.
func (l *Lease) Sandbox() domain.Sandbox { return l.sandbox }

// ReadLimit is how large a file the read tool loads at all.
func (l *Lease) ReadLimit() int64 { return l.sandbox.ReadLimit() }

// Exec runs a command in the instance.
func (l *Lease) Exec(ctx context.Context, req ports.ExecRequest) (int, error) {
	l.touch()
	defer l.touch()
	return l.rt.Exec(ctx, l.inst, req)
}

// ReadFile reads a whole file of at most the sandbox's read limit (see
// ports.SandboxBackend.ReadFile).
func (l *Lease) ReadFile(ctx context.Context, path string) ([]byte, error) {
	l.touch()
	return l.rt.ReadFile(ctx, l.inst, path, l.ReadLimit())
}

// WriteFile writes a file, creating its parent directories.
func (l *Lease) WriteFile(ctx context.Context, path string, data []byte) error {
	l.touch()
	return l.rt.WriteFile(ctx, l.inst, path, data)
}

// RemoveFile deletes one file.
func (l *Lease) RemoveFile(ctx context.Context, path string) error {
	l.touch()
	return l.rt.RemoveFile(ctx, l.inst, path)
}

// ListFiles lists a directory's tree to depth levels.
func (l *Lease) ListFiles(ctx context.Context, dir string, depth int) ([]string, error) {
	l.touch()
	return l.rt.ListFiles(ctx, l.inst, dir, depth)
}

// OpenPTY starts an interactive shell in the instance.
func (l *Lease) OpenPTY(ctx context.Context, cols, rows uint) (ports.PTY, error) {
	l.touch()
	return l.rt.OpenPTY(ctx, l.inst, cols, rows)
}

func (l *Lease) touch() {
	l.s.mu.Lock()
	if u := l.s.use[l.project.ID]; u != nil {
		u.lastUsed = l.s.d.Clock.Now()
	}
	l.s.mu.Unlock()
}

// sever closes every terminal's and program's lease of a project.
func (s *Service) sever(projectID string) {
	s.mu.Lock()
	var ls []*Lease
	if u := s.use[projectID]; u != nil {
		for l := range u.terminals {
			ls = append(ls, l)
		}
		for l := range u.programs {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	for _, l := range ls {
		select {
		case <-l.severed:
		default:
			close(l.severed)
		}
	}
}

// forget drops a deleted project's use record.
func (s *Service) forget(projectID string) {
	s.mu.Lock()
	delete(s.use, projectID)
	s.mu.Unlock()
}

func (s *Service) stopNow(projectID string, rt ports.SandboxBackend, in ports.ProjectInstance) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := rt.Stop(ctx, in); err != nil && !errs.Is(err, errs.NotFound) {
		s.d.Log.Warn("stopping a sandbox instance failed", "project_id", projectID, "err", err)
		return
	}
	s.mu.Lock()
	if u := s.use[projectID]; u != nil && u.users == 0 {
		u.lastUsed = time.Time{}
	}
	s.mu.Unlock()
}

// managed loads a project for a management act (owner or admin).
func (s *Service) managed(ctx context.Context, p domain.Principal, id string) (ports.SandboxBackend, ports.ProjectInstance, domain.Sandbox, error) {
	pr, err := s.d.Store.FindProject(ctx, id)
	if err != nil {
		return nil, ports.ProjectInstance{}, domain.Sandbox{}, err
	}
	if err := pr.CheckManage(p); err != nil {
		return nil, ports.ProjectInstance{}, domain.Sandbox{}, err
	}
	_, sb, in, err := s.loadInstance(ctx, id)
	if err != nil {
		return nil, in, sb, err
	}
	rt, err := s.backend(sb)
	return rt, in, sb, err
}

// State reports a project's instance: absent, stopped or running.
func (s *Service) State(ctx context.Context, p domain.Principal, id string) (ports.SandboxState, error) {
	rt, in, _, err := s.managed(ctx, p, id)
	if err != nil {
		return "", err
	}
	return rt.State(ctx, in)
}

// Start provisions and starts a project's instance (where a person is
// watching, rather than inside the next run).
func (s *Service) Start(ctx context.Context, p domain.Principal, id string) (ports.SandboxState, error) {
	if _, _, _, err := s.managed(ctx, p, id); err != nil {
		return "", err
	}
	l, err := s.Acquire(ctx, id, ForExport)
	if err != nil {
		return "", err
	}
	l.Release()
	return ports.SandboxRunning, nil
}

// Stop stops a project's instance, keeping the tree. While a run or a
// terminal uses it the stop is deferred until that work ends, and stopped
// is false.
func (s *Service) Stop(ctx context.Context, p domain.Principal, id string) (bool, error) {
	rt, in, _, err := s.managed(ctx, p, id)
	if err != nil {
		return false, err
	}
	u := s.usageOf(id)
	s.mu.Lock()
	if u.users > 0 {
		u.doomed = true
		s.mu.Unlock()
		return false, nil
	}
	s.mu.Unlock()
	if err := rt.Stop(ctx, in); err != nil && !errs.Is(err, errs.NotFound) {
		return false, err
	}
	s.mu.Lock()
	if u.users == 0 {
		u.lastUsed = time.Time{}
	}
	s.mu.Unlock()
	return true, nil
}

// Rebuild replaces a project's container with a fresh one from the current
// image, keeping the tree; its terminals are severed.
func (s *Service) Rebuild(ctx context.Context, p domain.Principal, id string) error {
	rt, in, sb, err := s.managed(ctx, p, id)
	if err != nil {
		return err
	}
	if !s.Supports(sb.Type).Rebuild {
		return errs.E(errs.Validation, "a %s sandbox is its own storage: export the project and create a new one instead", sb.Type)
	}
	s.sever(id)
	u := s.usageOf(id)
	u.ensure.Lock()
	defer u.ensure.Unlock()
	if err := rt.Rebuild(ctx, in); err != nil {
		return err
	}
	s.mu.Lock()
	u.lastUsed, u.gen = s.d.Clock.Now(), in.Generation
	s.mu.Unlock()
	return nil
}

// Export streams a project's /workspace as an uncompressed tar to w. Owner
// only, and logged: it takes a whole tree off the machine. Check runs
// first, so a refusal can still be an error response.
func (s *Service) Export(ctx context.Context, p domain.Principal, id string) (func(w io.Writer) error, error) {
	if _, err := s.OwnProject(ctx, p, id); err != nil {
		return nil, err
	}
	l, err := s.Acquire(ctx, id, ForExport)
	if err != nil {
		return nil, err
	}
	s.d.Log.Info("audit: project export", "user_id", p.User.ID, "user", p.User.Username, "project_id", id)
	return func(w io.Writer) error {
		defer l.Release()
		return l.rt.Export(ctx, l.inst, w)
	}, nil
}

// SweepIdle stops every instance nobody has used for sandbox_idle_minutes
// (0: never). It returns how many it stopped.
func (s *Service) SweepIdle(ctx context.Context) (int, error) {
	minutes, err := s.d.Settings.Int(ctx, settings.KeySandboxIdleMinutes)
	if err != nil || minutes <= 0 {
		return 0, err
	}
	cutoff := s.d.Clock.Now().Add(-time.Duration(minutes) * time.Minute)
	s.mu.Lock()
	var idle []string
	for id, u := range s.use {
		if u.users == 0 && !u.lastUsed.IsZero() && u.lastUsed.Before(cutoff) {
			idle = append(idle, id)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, id := range idle {
		_, sb, in, err := s.loadInstance(ctx, id)
		if errs.Is(err, errs.NotFound) {
			s.forget(id)
			continue
		}
		if err != nil {
			s.d.Log.Warn("idle stop: loading the project failed", "project_id", id, "err", err)
			continue
		}
		rt, _ := s.backend(sb)
		s.mu.Lock()
		busy := s.use[id] != nil && s.use[id].users > 0
		s.mu.Unlock()
		if busy {
			continue
		}
		s.stopNow(id, rt, in)
		n++
	}
	return n, nil
}

// Adopt notes the instances already running on the sandboxes (a restart
// left them), so the idle stop reaches them too.
func (s *Service) Adopt(ctx context.Context) error {
	boxes, err := s.d.Store.ListSandboxes(ctx)
	if err != nil {
		return err
	}
	projects, err := s.d.Store.ListProjects(ctx, "")
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, p := range projects {
		known[p.ID] = true
	}
	now := s.d.Clock.Now()
	for _, sb := range boxes {
		rt, err := s.backend(sb)
		if err != nil {
			continue
		}
		t, err := s.target(sb)
		if err != nil {
			return err
		}
		running, err := rt.Running(ctx, t)
		if err != nil {
			s.d.Log.Warn("listing a sandbox's running instances failed", "sandbox", sb.Name, "err", err)
			continue
		}
		for _, id := range running {
			if !known[id] {
				continue
			}
			u := s.usageOf(id)
			s.mu.Lock()
			if u.lastUsed.IsZero() {
				u.lastUsed = now
			}
			s.mu.Unlock()
		}
	}
	return nil
}

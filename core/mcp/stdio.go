package mcp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Users finds a server's owner, whose role decides where its program may
// run.
type Users interface {
	FindUserByID(ctx context.Context, id string) (domain.User, error)
}

// Projects runs stdio servers' programs inside projects' sandboxes
// (core/sandboxes).
type Projects interface {
	// FindProject returns not_found when absent.
	FindProject(ctx context.Context, id string) (domain.Project, error)
	// HoldForProgram makes the project's instance run and holds it while
	// a program runs in it.
	HoldForProgram(ctx context.Context, projectID string) (ProgramHold, error)
}

// ProgramHold is a held project instance a program runs in.
type ProgramHold interface {
	// Exec runs a command in the instance (ports.SandboxBackend.Exec).
	Exec(ctx context.Context, req ports.ExecRequest) (int, error)
	// Severed is closed when the hold must end now: the project's
	// environment or sandbox changed, or the project is gone. The program
	// is stopped and started again in what the project became.
	Severed() <-chan struct{}
	// Release ends the hold.
	Release()
}

// errHostProgram is a member's refusal to run a program on the host.
const errHostProgram = "only admins may run an MCP server as a program on this workbench's host " +
	"(the setting mcp_stdio_members_on_host is off): run it inside one of your projects' sandboxes (project_id), or ask an admin"

// checkProgram refuses, at a write, a stdio server the caller may not run:
// on the host unless they are an admin or the setting lets members; in a
// project they do not manage. The owner is judged again at every start
// (program).
func (s *Service) checkProgram(ctx context.Context, p domain.Principal, c domain.MCPConfig) error {
	if !c.Stdio() {
		return nil
	}
	if c.ProjectID != "" {
		_, err := s.projectFor(ctx, p.User, c.ProjectID)
		return err
	}
	ok, err := s.mayRunOnHost(ctx, p.User)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Forbidden, "%s", errHostProgram)
	}
	return nil
}

// mayRunOnHost reports whether u may have a program run on the host: an
// active admin, or anyone while mcp_stdio_members_on_host is on.
func (s *Service) mayRunOnHost(ctx context.Context, u domain.User) (bool, error) {
	if u.ActiveAdmin() {
		return true, nil
	}
	if s.d.Settings == nil {
		return false, nil
	}
	return s.d.Settings.Bool(ctx, settings.KeyMCPStdioMembersOnHost)
}

// projectFor returns the project u's program may run in: theirs, or any
// for an active admin. Anything else reads as absent (validation on the
// field).
func (s *Service) projectFor(ctx context.Context, u domain.User, id string) (domain.Project, error) {
	if s.d.Projects == nil {
		return domain.Project{}, errs.Field("config.project_id", "this workbench runs no project sandboxes")
	}
	pr, err := s.d.Projects.FindProject(ctx, id)
	if err == nil && pr.OwnerID != u.ID && !u.ActiveAdmin() {
		err = errs.E(errs.NotFound, "project not found")
	}
	if errs.Is(err, errs.NotFound) {
		return pr, errs.Field("config.project_id", "names no project of yours")
	}
	return pr, err
}

// program resolves a stdio server's program for a start, its owner judged
// now: on the host only while the owner may run one there; in a project,
// the instance held until release. severed ends the session when the
// project's instance must be let go.
func (s *Service) program(ctx context.Context, row domain.MCPServer, tail *stderrTail) (st *ports.MCPStdio, release func(), severed <-chan struct{}, err error) {
	env := make(map[string]string, len(row.Config.Env))
	for name, sealed := range row.Config.Env {
		if env[name], err = s.box.Open(envPlace(row.ID, name), sealed); err != nil {
			return nil, nil, nil, err
		}
	}
	st = &ports.MCPStdio{Command: row.Config.Command, Args: row.Config.Args, Env: env, Stderr: tail}
	owner, err := s.owner(ctx, row.OwnerID)
	if err != nil {
		return nil, nil, nil, err
	}
	if row.Config.ProjectID == "" {
		ok, err := s.mayRunOnHost(ctx, owner)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			return nil, nil, nil, &ports.MCPError{Kind: ports.MCPProtocol, Message: "not started: " + errHostProgram}
		}
		return st, func() {}, nil, nil
	}
	if _, err := s.projectFor(ctx, owner, row.Config.ProjectID); err != nil {
		return nil, nil, nil, &ports.MCPError{Kind: ports.MCPProtocol, Message: "not started: its project is gone or no longer its owner's", Err: err}
	}
	hold, err := s.d.Projects.HoldForProgram(ctx, row.Config.ProjectID)
	if err != nil {
		if errs.Is(err, errs.Upstream) || errs.Is(err, errs.Unavailable) {
			return nil, nil, nil, &ports.MCPError{Kind: ports.MCPUnreachable, Message: "its project's sandbox could not be started: " + err.Error(), Err: err}
		}
		return nil, nil, nil, &ports.MCPError{Kind: ports.MCPProtocol, Message: "its project's sandbox could not be started: " + err.Error(), Err: err}
	}
	st.Exec = hold.Exec
	return st, hold.Release, hold.Severed(), nil
}

// owner finds a server's owner; a deleted account reads as a member with
// no rights.
func (s *Service) owner(ctx context.Context, id string) (domain.User, error) {
	if s.d.Users == nil {
		return domain.User{}, nil
	}
	u, err := s.d.Users.FindUserByID(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return domain.User{ID: id}, nil
	}
	return u, err
}

// tailBytes is how much of a program's stderr a status keeps.
const tailBytes = 1024

// stderrTail is a program's standard error: each line logged, the last
// tailBytes kept for the status a person reads when it stops.
type stderrTail struct {
	log     *slog.Logger
	mu      sync.Mutex
	partial []byte
	tail    []byte
}

func newStderrTail(log *slog.Logger, row domain.MCPServer) *stderrTail {
	return &stderrTail{log: log.With("server", row.Name, "server_id", row.ID)}
}

// Write logs each complete line and keeps the tail; it never fails, so a
// chatty program is never stopped for what it says.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - tailBytes; over > 0 {
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(t.partial[:i])); line != "" {
			t.log.Info("mcp server stderr", "line", line)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > tailBytes {
		t.log.Info("mcp server stderr", "line", string(t.partial))
		t.partial = t.partial[:0]
	}
	return len(p), nil
}

// String is the kept tail, trimmed, its first (cut) line dropped when the
// tail was cut.
func (t *stderrTail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.tail), "")
	if len(t.tail) >= tailBytes {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return strings.TrimSpace(s)
}

// suffix is what a status adds for the program's stderr: its tail, or
// "" when it said nothing.
func (t *stderrTail) suffix() string {
	if said := t.String(); said != "" {
		return "; its stderr ended: " + said
	}
	return ""
}

// withStderr adds what a program wrote to its stderr to why it stopped.
func withStderr(err error, tail *stderrTail) error {
	more := tail.suffix()
	if more == "" || err == nil {
		return err
	}
	var me *ports.MCPError
	if errors.As(err, &me) {
		out := *me
		out.Message += more
		return &out
	}
	return errors.New(err.Error() + more)
}

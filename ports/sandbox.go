package ports

import (
	"context"
	"io"

	"github.com/agents-server/agents-server/core/domain"
)

// Sandbox backends: where project trees live and commands run. Every
// sandbox type has one backend implementing SandboxBackend; core speaks
// only this port and never a backend's own vocabulary. Daemon-level calls
// that only some backends have (containers on a Docker daemon) are the
// separate ContainerAdmin port.

// SandboxState is where a project's instance stands.
type SandboxState string

// The instance states.
const (
	SandboxAbsent  SandboxState = "absent"  // no instance (its storage may exist)
	SandboxStopped SandboxState = "stopped" // created, not running (stopped or paused)
	SandboxRunning SandboxState = "running"
)

// Values lists the states.
func (SandboxState) Values() []string {
	return []string{string(SandboxAbsent), string(SandboxStopped), string(SandboxRunning)}
}

// SandboxTarget is one sandbox row as its backend needs it: the type's
// config with its secrets opened. Config is opaque to core: it is the
// type's config value from the row (a pointer to the domain's config struct
// for that type, a copy), and only the backend of Type reads it.
type SandboxTarget struct {
	// SandboxID is the row the configuration came from (a backend keeps
	// per-sandbox state by it, such as a pinned SSH host key).
	SandboxID string
	Type      string
	Config    any
}

// ProjectInstance names one project's instance on a sandbox.
type ProjectInstance struct {
	ProjectID string
	// Name is the instance's stable name on its backend, derived from the
	// project id.
	Name string
	// StorageName is where a backend that keeps the tree apart from the
	// instance keeps it (a volume); backends whose instance is its own
	// storage ignore it.
	StorageName string
	Env         map[string]string // the project's environment, plaintext
	// Generation is the project's runtime generation: an instance created
	// for an older one is replaced where the backend can (the tree stays).
	Generation int64
	// InstanceRef is the instance recorded for the project
	// (InstanceRefStore), as read when this value was built; "" when none.
	InstanceRef string
	Target      SandboxTarget
}

// ExecRequest is one command in a project's instance.
type ExecRequest struct {
	Cmd     []string // argv; run as is (no shell) — wrap in ["bash","-lc",…] for a shell
	WorkDir string   // "" = /workspace
	Stdin   io.Reader
	Stdout  io.Writer // streamed as the command writes
	Stderr  io.Writer
	Env     map[string]string // added to the project's environment
}

// PTY is an interactive shell in a project's instance.
type PTY interface {
	io.ReadWriteCloser
	// Resize sets the terminal size.
	Resize(cols, rows uint) error
	// Wait blocks until the shell exits and returns its exit code (-1 when
	// unknown).
	Wait() (int, error)
}

// FileTooLargeError is ReadFile's refusal of a file over the limit it was
// given; Size is the file's size in bytes.
type FileTooLargeError struct {
	Path string
	Size int64
}

func (e *FileTooLargeError) Error() string {
	return e.Path + " is over the read limit"
}

// SandboxBackend runs the project instances of one sandbox type. Failures
// to reach the backend's host are upstream errors; a missing instance where
// one is required is not_found; a config the backend cannot use is
// validation.
type SandboxBackend interface {
	// Type is the sandbox type it runs (a key of domain.SandboxTypes).
	Type() string
	// Supports are the backend's capability flags (Runs is implied).
	Supports() domain.SandboxSupports
	// Ensure acquires the instance: created when absent, an instance of
	// another generation (or foreign config) replaced where the backend
	// can, a stopped or paused one started.
	Ensure(ctx context.Context, in ProjectInstance) error
	// State reports the instance's state.
	State(ctx context.Context, in ProjectInstance) (SandboxState, error)
	// Stop stops (or pauses) the instance, keeping the tree.
	Stop(ctx context.Context, in ProjectInstance) error
	// Rebuild replaces the instance with a fresh one, keeping the tree;
	// only where Supports().Rebuild says so.
	Rebuild(ctx context.Context, in ProjectInstance) error
	// Destroy reclaims the instance and its tree.
	Destroy(ctx context.Context, in ProjectInstance) error
	// Exec runs a command in the running instance, streaming its output
	// to the request's writers, and returns its exit code.
	Exec(ctx context.Context, in ProjectInstance, req ExecRequest) (int, error)
	// OpenPTY starts an interactive login shell in the running instance,
	// in /workspace.
	OpenPTY(ctx context.Context, in ProjectInstance, cols, rows uint) (PTY, error)
	// ReadFile reads a whole file of at most limit bytes: not_found when
	// it does not exist, validation when it is a directory, a
	// *FileTooLargeError when it is larger than limit.
	ReadFile(ctx context.Context, in ProjectInstance, path string, limit int64) ([]byte, error)
	// WriteFile writes a file, creating its parent directories.
	WriteFile(ctx context.Context, in ProjectInstance, path string, data []byte) error
	// RemoveFile deletes one file (not a directory).
	RemoveFile(ctx context.Context, in ProjectInstance, path string) error
	// ListFiles lists a directory's tree to depth levels, relative to it,
	// directories with a trailing slash; not_found when it is not a
	// directory.
	ListFiles(ctx context.Context, in ProjectInstance, dir string, depth int) ([]string, error)
	// Export writes /workspace as an uncompressed tar.
	Export(ctx context.Context, in ProjectInstance, w io.Writer) error
	// Running lists the project ids whose instances run on the target now
	// (a restart left them), so idle stops reach them.
	Running(ctx context.Context, t SandboxTarget) ([]string, error)
	// Test runs `echo ok` in a throw-away instance of the target: ok and
	// the output when it ran (ok false: it ran but failed); an error when
	// the host could not be reached.
	Test(ctx context.Context, t SandboxTarget) (ok bool, output string, err error)
	// Where describes where the project's tree lives, for admins; it is
	// handed the instance without its environment and with the config's
	// secrets as stored (it must not need them).
	Where(in ProjectInstance) string
}

// ContainerInfo is one container this server created on a daemon.
type ContainerInfo struct {
	Name      string
	ProjectID string
	State     string
	Image     string
}

// ContainerAdmin is the daemon-level surface of a backend whose instances
// are containers on a daemon an admin may inspect: what is there, and
// stopping or removing one by name.
type ContainerAdmin interface {
	// Containers lists this server's containers on the target's daemon.
	Containers(ctx context.Context, t SandboxTarget) ([]ContainerInfo, error)
	// StopContainer and RemoveContainer act on one of them by name; a name
	// this server did not create is not_found.
	StopContainer(ctx context.Context, t SandboxTarget, name string) error
	RemoveContainer(ctx context.Context, t SandboxTarget, name string) error
}

package ports

import (
	"context"
	"io"
)

// Sandbox runtimes: where project trees live and commands run. One port,
// one adapter per sandbox type (docker now, e2b later).

// SandboxState is where a project's instance stands.
type SandboxState string

// The instance states.
const (
	SandboxAbsent  SandboxState = "absent"  // no container (the volume may exist)
	SandboxStopped SandboxState = "stopped" // created, not running
	SandboxRunning SandboxState = "running"
)

// DockerTarget is a docker sandbox's configuration, secrets opened.
type DockerTarget struct {
	// SandboxID is the row the configuration came from: an ssh:// host's
	// pinned host key is kept per sandbox (see SSHHostKeyStore).
	SandboxID   string
	Host        string // "" = this machine's daemon (DOCKER_HOST or the default socket); tcp://h:p; ssh://user@host[:port]; unix:///path
	SSHPassword string // for ssh:// hosts
	SSHKey      string // PEM private key, for ssh:// hosts
	Image       string
	Runtime     string // e.g. runsc; "" = the daemon's default
	User        string // user[:group]; "" = root
	Network     string // "" = no network at all
	MemoryMB    int    // 0 = 4096
	CPUs        float64
}

// ProjectInstance names one project's instance on a sandbox: a named
// volume holding /workspace and one persistent container using it.
type ProjectInstance struct {
	ProjectID string
	Container string            // agents-<project id tail>
	Volume    string            // agents-proj-<project id tail>
	Env       map[string]string // the project's environment, plaintext
	// Generation is the project's runtime generation: a container created
	// for an older one is replaced (the volume stays).
	Generation int64
	Target     DockerTarget
}

// ExecRequest is one command in a project's container.
type ExecRequest struct {
	Cmd     []string // argv; run as is (no shell) — wrap in ["bash","-lc",…] for a shell
	WorkDir string   // "" = /workspace
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Env     map[string]string // added to the project's environment
}

// PTY is an interactive shell in a project's container.
type PTY interface {
	io.ReadWriteCloser
	// Resize sets the terminal size.
	Resize(cols, rows uint) error
	// Wait blocks until the shell exits and returns its exit code (-1 when
	// unknown).
	Wait() (int, error)
}

// ContainerInfo is one container this server created on a daemon.
type ContainerInfo struct {
	Name      string
	ProjectID string
	State     string
	Image     string
}

// SandboxRuntime runs project instances on docker daemons. Failures to
// reach a daemon are upstream errors; a missing container or volume where
// one is required is not_found.
type SandboxRuntime interface {
	// Ensure makes the instance run: volume and container created when
	// absent, a container of another generation (or foreign config)
	// replaced, a stopped one started.
	Ensure(ctx context.Context, in ProjectInstance) error
	// State reports the instance's state.
	State(ctx context.Context, in ProjectInstance) (SandboxState, error)
	// Stop stops the container, keeping it and the volume.
	Stop(ctx context.Context, in ProjectInstance) error
	// Rebuild replaces the container with a fresh one, keeping the volume.
	Rebuild(ctx context.Context, in ProjectInstance) error
	// Destroy removes the container and the volume.
	Destroy(ctx context.Context, in ProjectInstance) error
	// Exec runs a command in the running container and returns its exit
	// code.
	Exec(ctx context.Context, in ProjectInstance, req ExecRequest) (int, error)
	// OpenPTY starts an interactive login shell (bash, else sh) in the
	// running container, in /workspace.
	OpenPTY(ctx context.Context, in ProjectInstance, cols, rows uint) (PTY, error)
	// Export writes /workspace as an uncompressed tar.
	Export(ctx context.Context, in ProjectInstance, w io.Writer) error
	// Test runs `echo ok` in a throw-away container of the target: ok and
	// the output when it ran (ok false: it ran but failed); an error when
	// the daemon could not be reached.
	Test(ctx context.Context, t DockerTarget) (ok bool, output string, err error)
	// Containers lists this server's containers on the target's daemon.
	Containers(ctx context.Context, t DockerTarget) ([]ContainerInfo, error)
	// StopContainer and RemoveContainer act on one of them by name; a name
	// this server did not create is not_found.
	StopContainer(ctx context.Context, t DockerTarget, name string) error
	RemoveContainer(ctx context.Context, t DockerTarget, name string) error
}

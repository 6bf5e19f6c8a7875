package docker

import (
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// dockerTarget is a docker sandbox's configuration, secrets opened: the
// adapter's reading of a ports.SandboxTarget.
type dockerTarget struct {
	// SandboxID is the row the configuration came from: an ssh:// host's
	// pinned host key is kept per sandbox (see ports.SSHHostKeyStore).
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

// dockerInstance is one project's instance on a docker sandbox: a named
// volume holding /workspace and one persistent container using it.
type dockerInstance struct {
	ProjectID  string
	Container  string            // agents-<project id tail>
	Volume     string            // agents-proj-<project id tail>
	Env        map[string]string // the project's environment, plaintext
	Generation int64             // a container of an older one is replaced (the volume stays)
	Target     dockerTarget
}

// targetOf reads a sandbox target's docker config; any other type is a
// validation error (the server routes by type, so this is a wiring bug).
func targetOf(t ports.SandboxTarget) (dockerTarget, error) {
	c, ok := t.Config.(*domain.DockerConfig)
	if !ok || c == nil {
		return dockerTarget{}, errs.E(errs.Validation, "sandbox %s is %s, not docker", t.SandboxID, t.Type)
	}
	return dockerTarget{SandboxID: t.SandboxID, Host: c.Host, SSHPassword: c.SSHPassword, SSHKey: c.SSHKey, Image: c.Image,
		Runtime: c.Runtime, User: c.User, Network: c.Network, MemoryMB: c.MemoryMB, CPUs: c.CPUs}, nil
}

// resolve reads a project instance in the adapter's terms: the container
// is the instance's name, the volume its storage.
func (r *Runtime) resolve(in ports.ProjectInstance) (dockerInstance, error) {
	t, err := targetOf(in.Target)
	if err != nil {
		return dockerInstance{}, err
	}
	return dockerInstance{ProjectID: in.ProjectID, Container: in.Name, Volume: in.StorageName, Env: in.Env,
		Generation: in.Generation, Target: t}, nil
}

// Package docker runs project sandboxes on Docker daemons through the Engine
// API (github.com/moby/moby/client): volumes, persistent containers, exec and
// PTYs. It never shells out — no docker CLI, no ssh binary — so a remote
// daemon is reached over pure-Go SSH (streamlocal forwarding to its socket).
//
// Every container and volume it creates carries labelManaged; it refuses to
// touch a container of a project's name that lacks it.
package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Options configures a Runtime. The zero value is the production setting.
type Options struct {
	// DefaultHost replaces DOCKER_HOST for targets whose Host is "" (tests
	// point it at a private daemon); "" keeps the environment's daemon.
	DefaultHost string
	// HostKeys keeps the host keys pinned for ssh:// daemons, per sandbox
	// (trust on first use). nil pins in memory for the life of the
	// process; the server wires its store, so a changed key is refused
	// after a restart too.
	HostKeys ports.SSHHostKeyStore
	// Clock stamps a pin with when it was met; nil is the system clock.
	Clock ports.Clock
	// TestTimeout bounds Test's `echo ok`; 0 means 30 seconds.
	TestTimeout time.Duration
}

// Runtime implements ports.SandboxBackend and ports.ContainerAdmin on Docker
// daemons. It keeps one
// API client per daemon address and is safe for concurrent use.
type Runtime struct {
	opts     Options
	hostKeys ports.SSHHostKeyStore
	// probeID is the value of labelTest on this Runtime's test containers,
	// so one process's probes are told apart from another's on a shared
	// daemon.
	probeID string

	mu      sync.Mutex
	daemons map[string]*daemon
	locks   keyedMutex
}

var (
	_ ports.SandboxBackend = (*Runtime)(nil)
	_ ports.ContainerAdmin = (*Runtime)(nil)
)

// New returns a Runtime; daemons are dialled lazily, on first use.
func New(opts Options) *Runtime {
	if opts.TestTimeout <= 0 {
		opts.TestTimeout = 30 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock
	}
	var hostKeys ports.SSHHostKeyStore = &memoryHostKeys{keys: map[string]domain.SSHHostKey{}}
	if opts.HostKeys != nil {
		hostKeys = opts.HostKeys
	}
	return &Runtime{opts: opts, probeID: randomHex(6), hostKeys: hostKeys, daemons: map[string]*daemon{}}
}

// Close releases every cached client and SSH connection. The Runtime stays
// usable: a later call dials again.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for host, d := range r.daemons {
		d.close()
		delete(r.daemons, host)
	}
	return nil
}

// daemon is one cached connection to a Docker daemon.
type daemon struct {
	api     *client.Client
	ssh     *sshDialer // nil unless the host is ssh://
	display string     // the host as shown in messages, without credentials
	creds   string     // hash of the SSH credentials the client was built with
	secrets []string   // strings that must never appear in an error message

	cpuMu sync.Mutex
	ncpu  int // the daemon machine's CPU count, 0 until known
}

func (d *daemon) close() {
	_ = d.api.Close()
	if d.ssh != nil {
		d.ssh.close()
	}
}

// daemonFor returns the cached client for t.Host, building it on first use.
// A changed SSH credential replaces the cached client, so a rotated key takes
// effect without a restart. An ssh:// client is cached per sandbox as well:
// its host key is pinned per sandbox, and one sandbox's connection must not
// carry another whose pin it was never checked against.
func (r *Runtime) daemonFor(t dockerTarget) (*daemon, error) {
	host := strings.TrimSpace(t.Host)
	if host == "" {
		host = r.opts.DefaultHost
	}
	key := host
	if strings.HasPrefix(host, "ssh://") {
		key = t.SandboxID + " " + host
	}
	creds := credentialHash(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.daemons[key]; ok {
		if d.creds == creds {
			return d, nil
		}
		d.close()
		delete(r.daemons, key)
	}
	d, err := r.newDaemon(host, t)
	if err != nil {
		return nil, err
	}
	d.creds = creds
	r.daemons[key] = d
	return d, nil
}

func credentialHash(t dockerTarget) string {
	if t.SSHPassword == "" && t.SSHKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(t.SSHPassword + "\x00" + t.SSHKey))
	return hex.EncodeToString(sum[:])
}

// newDaemon builds the API client for host ("" = DOCKER_HOST or the default
// socket). API version negotiation is the client's default, so Debian's 20.10
// daemon (API 1.41) and current ones both work.
func (r *Runtime) newDaemon(host string, t dockerTarget) (*daemon, error) {
	d := &daemon{display: displayHost(host)}
	var opts []client.Opt
	scheme, _, _ := strings.Cut(host, "://")
	switch {
	case host == "":
		opts = append(opts, client.FromEnv)
	case scheme == "unix" || scheme == "tcp":
		opts = append(opts, client.WithHost(host))
	case scheme == "ssh":
		target, err := parseSSHHost(host)
		if err != nil {
			return nil, err
		}
		cfg, err := sshClientConfig(target.user, t.SSHPassword, t.SSHKey)
		if err != nil {
			return nil, err
		}
		// The pin is the sandbox's, for the host as its row spells it.
		sandboxID, rowHost, display := t.SandboxID, t.Host, d.display
		d.ssh = &sshDialer{addr: target.addr, socket: target.socket, config: cfg,
			hostKey: func(ctx context.Context, key ssh.PublicKey) error {
				return r.checkHostKey(ctx, sandboxID, rowHost, display, key)
			}}
		d.secrets = secretsOf(t)
		// The unix scheme keeps the client off HTTP proxies and sends the
		// local Host header; the SSH dialer then replaces the socket dial.
		opts = append(opts, client.WithHost("unix://"+target.socket), client.WithDialContext(d.ssh.DialContext))
	default:
		return nil, errs.Field("host", "unsupported docker host %q: use unix://, tcp:// or ssh://", d.display)
	}
	api, err := client.New(opts...)
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "host: cannot use docker host %q", d.display)
	}
	d.api = api
	if d.display == "" {
		d.display = api.DaemonHost()
	}
	return d, nil
}

func secretsOf(t dockerTarget) []string {
	var out []string
	if t.SSHPassword != "" {
		out = append(out, t.SSHPassword)
	}
	if t.SSHKey != "" {
		out = append(out, t.SSHKey)
	}
	return out
}

// displayHost strips any password from a host URL so messages can name it.
func displayHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.User == nil {
		return host
	}
	return u.Redacted()
}

// keyedMutex serialises the lifecycle operations on one container of this
// process, so a run and a terminal that both Ensure at once do not race to
// create the same name. Entries are dropped when nobody holds them.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*refMutex{}
	}
	m := k.locks[key]
	if m == nil {
		m = &refMutex{}
		k.locks[key] = m
	}
	m.refs++
	k.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		k.mu.Lock()
		m.refs--
		if m.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

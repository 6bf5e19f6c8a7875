package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/errs"
)

// defaultRemoteSocket is where a remote daemon listens unless the ssh:// URL
// names another path (e.g. a rootless daemon's /run/user/1000/docker.sock).
const defaultRemoteSocket = "/var/run/docker.sock"

const sshHandshakeTimeout = 15 * time.Second

// sshHost is a parsed ssh://user@host[:port][/socket] address.
type sshHost struct {
	user   string
	addr   string // host:port
	socket string // the daemon's socket on the remote machine
}

// parseSSHHost reads an ssh:// docker host. A password in the URL is refused:
// it would be stored and shown unmasked, unlike the ssh_password field.
func parseSSHHost(raw string) (sshHost, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "ssh" || u.Hostname() == "" {
		return sshHost{}, errs.Field("host", "not a valid ssh://user@host[:port] address")
	}
	if u.User == nil || u.User.Username() == "" {
		return sshHost{}, errs.Field("host", "ssh hosts need a user: ssh://user@%s", u.Host)
	}
	if _, has := u.User.Password(); has {
		return sshHost{}, errs.Field("host", "put the SSH password in ssh_password, not in the host address")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return sshHost{}, errs.Field("host", "ssh hosts take no query or fragment")
	}
	port := u.Port()
	if port == "" {
		port = "22"
	}
	socket := u.Path
	if socket == "" || socket == "/" {
		socket = defaultRemoteSocket
	}
	return sshHost{user: u.User.Username(), addr: net.JoinHostPort(u.Hostname(), port), socket: socket}, nil
}

// sshClientConfig builds the client configuration from the target's
// credentials: the key first (an encrypted key is opened with the password),
// then the password, also offered to keyboard-interactive prompts because
// many servers allow only that form of it. The host key check is not set
// here: each connection sets its own, bound to the context of the call
// that makes it (see sshDialer.connect).
func sshClientConfig(user, password, key string) (*ssh.ClientConfig, error) {
	var methods []ssh.AuthMethod
	if strings.TrimSpace(key) != "" {
		signer, err := ssh.ParsePrivateKey([]byte(key))
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			if password == "" {
				return nil, errs.Field("ssh_key", "the key is encrypted; put its passphrase in ssh_password")
			}
			signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(key), []byte(password))
		}
		if err != nil {
			// The parser's message never quotes the key, but keep it out anyway.
			return nil, errs.Field("ssh_key", "not a usable PEM private key")
		}
		methods = append(methods, ssh.PublicKeys(signer))
	}
	if password != "" {
		methods = append(methods, ssh.Password(password),
			ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = password
				}
				return answers, nil
			}))
	}
	if len(methods) == 0 {
		return nil, errs.Field("ssh_password", "an ssh:// host needs ssh_password or ssh_key")
	}
	return &ssh.ClientConfig{User: user, Auth: methods, Timeout: sshHandshakeTimeout}, nil
}

// sshDialer is the HTTP client's dialer for an ssh:// daemon: one SSH
// connection per daemon, redialled when it drops, and one streamlocal channel
// to the remote socket per HTTP connection.
type sshDialer struct {
	addr   string
	socket string
	config *ssh.ClientConfig
	// hostKey checks the host key a connection presents, with the context
	// of the call that made the connection (the check may consult a store).
	hostKey func(ctx context.Context, key ssh.PublicKey) error

	mu     sync.Mutex
	client *ssh.Client
}

// DialContext opens a channel to the remote docker socket; network and
// address (the client's placeholders) are ignored.
func (d *sshDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := c.DialContext(ctx, "unix", d.socket)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// A half-dead connection fails here first: drop it and try a fresh one.
	d.drop(c)
	if c, err = d.connect(ctx); err != nil {
		return nil, err
	}
	conn, err = c.DialContext(ctx, "unix", d.socket)
	if err != nil {
		return nil, fmt.Errorf("ssh: open %s on %s: %w", d.socket, d.addr, err)
	}
	return conn, nil
}

func (d *sshDialer) connect(ctx context.Context) (*ssh.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.client != nil {
		return d.client, nil
	}
	dialer := net.Dialer{Timeout: sshHandshakeTimeout}
	raw, err := dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, fmt.Errorf("ssh: dial %s: %w", d.addr, err)
	}
	// ClientConfig.Timeout covers only ssh.Dial's TCP dial; bound the
	// handshake here, then lift the deadline for the long-lived connection.
	deadline := time.Now().Add(sshHandshakeTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = raw.SetDeadline(deadline)
	cfg := *d.config
	cfg.HostKeyCallback = func(_ string, _ net.Addr, key ssh.PublicKey) error { return d.hostKey(ctx, key) }
	conn, chans, reqs, err := ssh.NewClientConn(raw, d.addr, &cfg)
	if err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("ssh: connect to %s: %w", d.addr, err)
	}
	_ = raw.SetDeadline(time.Time{})
	c := ssh.NewClient(conn, chans, reqs)
	d.client = c
	go func() {
		_ = c.Wait()
		d.drop(c)
	}()
	return c, nil
}

// drop forgets c (if it is still the current connection) and closes it.
func (d *sshDialer) drop(c *ssh.Client) {
	d.mu.Lock()
	if d.client == c {
		d.client = nil
	}
	d.mu.Unlock()
	_ = c.Close()
}

func (d *sshDialer) close() {
	d.mu.Lock()
	c := d.client
	d.client = nil
	d.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

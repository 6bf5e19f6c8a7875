package docker

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// fakeSSHD is an in-process SSH server that forwards direct-streamlocal
// channels (what `ssh -L local:/remote.sock` asks for) to a docker socket,
// whatever path the client names — so ssh:// targets can be tested against
// a daemon without an OpenSSH server. Its host key can be swapped, as a
// reinstalled machine's would be, while it keeps its address.
type fakeSSHD struct {
	addr    string
	mu      sync.Mutex
	signer  ssh.Signer // the host key it presents
	logins  int        // password attempts: a refused host key must see none
	sockets []string   // the remote socket paths clients asked for
}

func newHostKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

func startFakeSSHD(t *testing.T, user, password, dockerSocket string) *fakeSSHD {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	s := &fakeSSHD{addr: ln.Addr().String(), signer: newHostKey(t)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn, s.config(user, password), dockerSocket)
		}
	}()
	return s
}

// config is the server configuration of one connection, with the host key
// of the moment.
func (s *fakeSSHD) config(user, password string) *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		s.mu.Lock()
		s.logins++
		s.mu.Unlock()
		if c.User() == user && string(pw) == password {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	s.mu.Lock()
	cfg.AddHostKey(s.signer)
	s.mu.Unlock()
	return cfg
}

// setHostKey makes later connections meet another host key.
func (s *fakeSSHD) setHostKey(k ssh.Signer) {
	s.mu.Lock()
	s.signer = k
	s.mu.Unlock()
}

func (s *fakeSSHD) loginAttempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

func (s *fakeSSHD) serve(conn net.Conn, cfg *ssh.ServerConfig, dockerSocket string) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		_ = conn.Close()
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		var msg struct {
			Socket    string
			Reserved  string
			Reserved2 uint32
		}
		if nc.ChannelType() != "direct-streamlocal@openssh.com" || ssh.Unmarshal(nc.ExtraData(), &msg) != nil {
			_ = nc.Reject(ssh.UnknownChannelType, "only streamlocal here")
			continue
		}
		s.mu.Lock()
		s.sockets = append(s.sockets, msg.Socket)
		s.mu.Unlock()
		up, err := net.Dial("unix", dockerSocket)
		if err != nil {
			_ = nc.Reject(ssh.ConnectionFailed, err.Error())
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			_ = up.Close()
			continue
		}
		go ssh.DiscardRequests(creqs)
		go func() { // client → daemon, passing on a half-close (stdin EOF)
			_, _ = io.Copy(up, ch)
			_ = up.(*net.UnixConn).CloseWrite()
		}()
		go func() {
			_, _ = io.Copy(ch, up)
			_ = ch.Close()
			_ = up.Close()
		}()
	}
}

func (s *fakeSSHD) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sockets...)
}

// localDockerSocket is the unix socket the test daemon listens on.
func localDockerSocket(t *testing.T) string {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		return "/var/run/docker.sock"
	}
	path, ok := strings.CutPrefix(host, "unix://")
	if !ok {
		t.Skipf("the ssh test forwards to a unix socket; DOCKER_HOST is %s", host)
	}
	return path
}

func TestSSHHostReachesDaemonThroughStreamlocal(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	sshd := startFakeSSHD(t, "tester", "s3cret-pw", localDockerSocket(t))
	target := testTarget()
	target.Host = "ssh://tester@" + sshd.addr + "/remote/docker.sock"
	target.SSHPassword = "s3cret-pw"
	ctx := testContext(t)

	ok, out, err := rt.Test(ctx, target)
	if err != nil || !ok || out != "ok\n" {
		t.Fatalf("Test over ssh = %v, %q, %v", ok, out, err)
	}
	if asked := sshd.asked(); len(asked) == 0 || asked[0] != "/remote/docker.sock" {
		t.Errorf("streamlocal paths asked = %v", asked)
	}

	// Exec and its stdin half-close ride hijacked connections over the channel.
	in := newInstance(t, rt)
	in.Target = target
	ensure(t, rt, in)
	if _, out, _ := run(t, rt, in, ports.ExecRequest{Stdin: strings.NewReader("through ssh\n")}, "cat"); out != "through ssh\n" {
		t.Errorf("cat over ssh = %q", out)
	}

	wrong := target
	wrong.SSHPassword = "not-the-password"
	_, _, err = rt.Test(ctx, wrong)
	if !errs.Is(err, errs.Upstream) || strings.Contains(errs.MessageOf(err), "not-the-password") {
		t.Errorf("Test with a wrong password: %v, want upstream without the password", err)
	}
}

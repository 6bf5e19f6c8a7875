// Package sshdtest is an in-process SSH server for tests of ssh:// docker
// hosts: it takes a password login and forwards direct-streamlocal
// channels (what `ssh -L local:/remote.sock` asks for) to a unix socket,
// whatever path the client names — or, with no socket, refuses every
// channel, for tests about the handshake alone. Its host key can be
// swapped while it keeps its address, as a reinstalled machine's would.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Server is a running test SSH server.
type Server struct {
	// Addr is host:port to dial.
	Addr string

	user, password, socket string

	mu      sync.Mutex
	signer  ssh.Signer // the host key it presents
	logins  int        // password attempts: a refused host key must see none
	sockets []string   // the remote socket paths clients asked for
}

// Start serves user/password logins until the test ends, forwarding
// streamlocal channels to socket ("" refuses every channel).
func Start(t testing.TB, user, password, socket string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	s := &Server{Addr: ln.Addr().String(), user: user, password: password, socket: socket, signer: NewHostKey(t)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

// NewHostKey makes a fresh ed25519 host key.
func NewHostKey(t testing.TB) ssh.Signer {
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

// SetHostKey makes later connections meet another host key.
func (s *Server) SetHostKey(k ssh.Signer) {
	s.mu.Lock()
	s.signer = k
	s.mu.Unlock()
}

// HostKey is the public host key presented now.
func (s *Server) HostKey() ssh.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signer.PublicKey()
}

// Fingerprint is the SHA256 fingerprint of the host key presented now.
func (s *Server) Fingerprint() string { return ssh.FingerprintSHA256(s.HostKey()) }

// LoginAttempts counts the password logins tried so far.
func (s *Server) LoginAttempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// Asked lists the remote socket paths clients asked to reach.
func (s *Server) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sockets...)
}

// config is one connection's server configuration, with the host key of
// the moment.
func (s *Server) config() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		s.mu.Lock()
		s.logins++
		s.mu.Unlock()
		if c.User() == s.user && string(pw) == s.password {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	s.mu.Lock()
	cfg.AddHostKey(s.signer)
	s.mu.Unlock()
	return cfg
}

func (s *Server) serve(conn net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, s.config())
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
		if s.socket == "" {
			_ = nc.Reject(ssh.ConnectionFailed, "no docker daemon here")
			continue
		}
		s.forward(nc)
	}
}

// forward joins an accepted channel to the socket, passing on a
// half-close (stdin EOF) toward it.
func (s *Server) forward(nc ssh.NewChannel) {
	up, err := net.Dial("unix", s.socket)
	if err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, creqs, err := nc.Accept()
	if err != nil {
		_ = up.Close()
		return
	}
	go ssh.DiscardRequests(creqs)
	go func() {
		_, _ = io.Copy(up, ch)
		_ = up.(*net.UnixConn).CloseWrite()
	}()
	go func() {
		_, _ = io.Copy(ch, up)
		_ = ch.Close()
		_ = up.Close()
	}()
}

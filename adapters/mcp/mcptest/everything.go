//go:build unix

// Package mcptest runs the real MCP reference server
// (@modelcontextprotocol/server-everything, pinned in
// adapters/mcp/testdata/everything) for integration tests, so the MCP
// adapter is checked against another implementation of the protocol
// rather than against the Go SDK talking to itself.
//
// It is unix-only: the server runs in its own process group so that
// Stop can kill it whole, which needs Setpgid and a group-wide kill.
package mcptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/internal/testenv"
)

const (
	// suite and enable are what testenv reports when the server cannot run.
	suite  = "MCP reference server suite"
	enable = "go tool task mcp:install"

	// startTimeout bounds how long a start may take; node starts in about a
	// second, so this only guards a wedged machine from hanging the test.
	startTimeout = 30 * time.Second

	// startAttempts covers the window between picking a free port and node
	// binding it, in which another process may take it (node then exits
	// with EADDRINUSE and the next attempt picks another port).
	startAttempts = 3
)

// Server is a running server-everything speaking MCP over streamable HTTP.
type Server struct {
	// URL is the streamable HTTP endpoint, http://127.0.0.1:PORT/mcp.
	URL string

	cmd    *exec.Cmd
	output bytes.Buffer  // stdout and stderr, read only after exited
	exited chan struct{} // closed once cmd.Wait has returned
	stop   sync.Once
}

// Everything starts server-everything on a free localhost port, waits until
// its MCP endpoint answers, and returns it; the test's cleanup kills it and,
// when the test failed, logs what the server printed. Without node or the
// installed package it fails the test under AGENTS_CI=1 and skips it
// otherwise (see testenv.Require).
func Everything(t testing.TB) *Server {
	t.Helper()
	return launch(t, "everything", []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp"},
		func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp" })
}

// EverythingStdio returns the command line that runs server-everything
// in stdio mode — node and its arguments, absolute — for the workbench to
// start itself; like Everything, it skips (or fails under AGENTS_CI=1)
// without node or the installed package.
func EverythingStdio(t testing.TB) (command string, args []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Require(t, suite, "node is not on PATH (install Node.js 20+)", enable)
	}
	index := filepath.Join(testdata(), "everything", "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(index); err != nil {
		testenv.Require(t, suite, "the pinned peer is not installed: "+err.Error(), enable)
	}
	abs, err := filepath.Abs(index)
	if err != nil {
		t.Fatal(err)
	}
	return node, []string{abs, "stdio"}
}

// launch runs one of the node peers of testdata/<dir> (args are node's,
// relative to that folder) on a free port, as Everything describes.
func launch(t testing.TB, dir string, args []string, urlOf func(port int) string) *Server {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Require(t, suite, "node is not on PATH (install Node.js 20+)", enable)
	}
	folder := filepath.Join(testdata(), dir)
	if _, err := os.Stat(filepath.Join(folder, args[0])); err != nil {
		testenv.Require(t, suite, "the pinned peer is not installed: "+err.Error(), enable)
	}
	var lastErr error
	for range startAttempts {
		s, err := start(node, folder, args, urlOf)
		if err == nil {
			t.Cleanup(func() {
				s.Stop()
				if t.Failed() {
					t.Logf("%s output:\n%s", dir, s.output.Bytes())
				}
			})
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting the %s peer: %v", dir, lastErr)
	return nil
}

// Stop kills the server now, with anything it spawned, and returns once it
// has exited, so the port is closed when Stop returns; tests call it to
// simulate the MCP server dying mid-call. Calling it again does nothing.
func (s *Server) Stop() {
	s.stop.Do(func() {
		select {
		case <-s.exited:
			// Already dead and reaped: its group id may belong to someone
			// else by now, so it must not be signalled.
		default:
			// The negative pid addresses the whole process group.
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
		<-s.exited
	})
}

// start runs one attempt: node on a fresh port, then waits for the URL to
// answer. On failure the process is already stopped and the error carries
// its output.
func start(node, dir string, args []string, urlOf func(port int) string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	// Its own process group, so Stop kills node and anything it forks with
	// one signal and nothing outlives the test. (server-everything has no
	// host setting and listens on every interface; the URL uses loopback.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &Server{URL: urlOf(port), cmd: cmd, exited: make(chan struct{})}
	// One writer for both streams: os/exec then serialises the writes.
	cmd.Stdout = &s.output
	cmd.Stderr = &s.output
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w; output:\n%s", err, s.output.Bytes())
	}
	return s, nil
}

// waitReady polls the endpoint until it answers HTTP. Any answer will do:
// the server replies 400 to a GET without a session, and an answer at all
// means the listener is up. An early exit (a taken port) ends the wait.
func (s *Server) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.exited:
			return errors.New("the peer exited before it was ready")
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the peer did not answer at %s within %s", s.URL, startTimeout)
		case <-s.exited:
			return errors.New("the peer exited before it was ready")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePort asks the kernel for an unused localhost port. The listener is
// closed before node binds the port, hence the retries in Everything.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// testdata is adapters/mcp/testdata, found from this source file rather
// than the working directory, which go test sets to the package under
// test — so any package's test can start the peers.
func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

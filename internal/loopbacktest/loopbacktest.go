// Package loopbacktest serves test peers on a loopback address of the
// test's choice, so one machine can stand for two networks: 127.0.0.1 the
// server's private network, 127.0.0.2 a public host (a test's outbound
// allowlist lets it through). It imports nothing of the project.
package loopbacktest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Serve starts h on addr (an IP address; the port is free) and closes it,
// its clients' connections first, when the test ends. Without the address
// (a host that does not route all of 127.0.0.0/8) the test skips.
func Serve(t testing.TB, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

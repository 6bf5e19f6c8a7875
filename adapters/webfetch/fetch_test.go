package webfetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/loopbacktest"
	"github.com/agents-server/agents-server/ports"
)

func TestFetchRefusesThePrivateNetworkUnlessAllowed(t *testing.T) {
	var hits atomic.Int64
	internal := loopbacktest.Serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("0123456789"))
		case "/hop":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	// 127.0.0.2 stands for a public host (allowed by the allowlist below)
	// that redirects into the private network.
	outside := loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/ok", http.StatusFound)
	}))
	f := New("test")
	ctx := context.Background()
	member := domain.OutboundPolicy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	local := strings.Replace(internal.URL, "127.0.0.1", "localhost", 1)
	for _, u := range []string{internal.URL + "/ok", local + "/ok", outside.URL + "/x"} {
		_, err := f.Fetch(ctx, ports.FetchRequest{URL: u, MaxBytes: 100, Outbound: member})
		if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.MessageOf(err), "outbound policy refuses 127.0.0.1 (a loopback address)") ||
			!strings.Contains(errs.MessageOf(err), "outbound_allow_private") {
			t.Fatalf("%s: %v, want the private network refused naming the setting", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server was reached %d times", n)
	}
	for name, p := range map[string]domain.OutboundPolicy{"open": domain.OpenOutbound,
		"allowlisted": {Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "by name": {Hosts: []string{"localhost"}}} {
		u := internal.URL + "/hop"
		if name == "by name" {
			u = local + "/hop"
		}
		r, err := f.Fetch(ctx, ports.FetchRequest{URL: u, MaxBytes: 100, Outbound: p})
		if err != nil || string(r.Body) != "0123456789" || r.Truncated {
			t.Fatalf("%s: %q %v %v", name, r.Body, r.Truncated, err)
		}
	}
	open := domain.OpenOutbound
	if r, _ := f.Fetch(ctx, ports.FetchRequest{URL: internal.URL + "/ok", MaxBytes: 4, Outbound: open}); string(r.Body) != "0123" || !r.Truncated {
		t.Fatalf("a body past the cap: %q %v", r.Body, r.Truncated)
	}
	if _, err := f.Fetch(ctx, ports.FetchRequest{URL: internal.URL + "/gone", MaxBytes: 4, Outbound: open}); errs.CodeOf(err) != errs.Upstream ||
		!strings.Contains(errs.MessageOf(err), "404") {
		t.Fatalf("a 404: %v", err)
	}
	if _, err := f.Fetch(ctx, ports.FetchRequest{URL: "file:///etc/passwd", MaxBytes: 4}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a file URL: %v", err)
	}
}

// A fetch that fails says why in a person's words — never the resolver's
// or the dialer's text, which the wrapped error keeps for the log.
func TestAFailedFetchSaysWhyInWords(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/SKILL.md"
	l.Close()
	_, err = New("test").Fetch(context.Background(), ports.FetchRequest{URL: closed, MaxBytes: 100, Outbound: domain.OpenOutbound})
	if msg := errs.MessageOf(err); errs.CodeOf(err) != errs.Upstream || !strings.Contains(msg, "nothing there took the connection") ||
		strings.Contains(msg, "dial tcp") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("a closed port: %q (%v)", msg, err)
	}
	notFound := &url.Error{Op: "Get", URL: "https://skills.invalid/SKILL.md",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "skills.invalid", IsNotFound: true}}}
	down := &url.Error{Op: "Get", URL: "https://skills.example/SKILL.md",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "skills.example", IsTemporary: true}}}
	redirects := &url.Error{Op: "Get", URL: "https://x.example/", Err: errors.New("more than 5 redirects")}
	for err, want := range map[error]string{
		notFound:  "no server goes by the name skills.invalid; check the address",
		down:      "the name skills.example could not be looked up",
		redirects: "more than 5 redirects",
		&url.Error{Op: "Get", URL: "https://x.example/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("something odd")}}: "the connection failed",
	} {
		if got := reason(err); !strings.Contains(got, want) || strings.Contains(got, "dial tcp") || strings.Contains(got, "lookup") {
			t.Errorf("%v reads %q, want %q", err, got, want)
		}
	}
}

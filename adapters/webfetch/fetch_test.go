package webfetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func TestFetchRefusesThePrivateNetworkUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("0123456789"))
		case "/hop":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := New("test")
	ctx := context.Background()
	// Through a name that resolves to loopback, too.
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, u := range []string{srv.URL + "/ok", local + "/ok"} {
		_, err := f.Fetch(ctx, ports.FetchRequest{URL: u, MaxBytes: 100})
		if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.MessageOf(err), "private or loopback") {
			t.Fatalf("%s: %v, want the private network refused", u, err)
		}
	}
	r, err := f.Fetch(ctx, ports.FetchRequest{URL: srv.URL + "/hop", MaxBytes: 100, AllowPrivate: true})
	if err != nil || string(r.Body) != "0123456789" || r.Truncated {
		t.Fatalf("allowed: %q %v %v", r.Body, r.Truncated, err)
	}
	if r, _ := f.Fetch(ctx, ports.FetchRequest{URL: srv.URL + "/ok", MaxBytes: 4, AllowPrivate: true}); string(r.Body) != "0123" || !r.Truncated {
		t.Fatalf("a body past the cap: %q %v", r.Body, r.Truncated)
	}
	if _, err := f.Fetch(ctx, ports.FetchRequest{URL: srv.URL + "/gone", MaxBytes: 4, AllowPrivate: true}); errs.CodeOf(err) != errs.Upstream ||
		!strings.Contains(errs.MessageOf(err), "404") {
		t.Fatalf("a 404: %v", err)
	}
	if _, err := f.Fetch(ctx, ports.FetchRequest{URL: "file:///etc/passwd", MaxBytes: 4}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a file URL: %v", err)
	}
}

func TestPrivateAddresses(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "::1": true, "fe80::1": true, "fc00::1": true, "0.0.0.0": true, "224.0.0.1": true,
		"8.8.8.8": false, "140.82.112.3": false, "2606:4700::1111": false} {
		if got := Private(net.ParseIP(addr)); got != want {
			t.Errorf("Private(%s) = %v, want %v", addr, got, want)
		}
	}
}

// Package egress is how the server's clients dial what people configure
// (MCP endpoints and their OAuth servers, provider base URLs, imports):
// through an address policy checked on the address actually dialed — after
// DNS, on every redirect hop — so a name that resolves to a refused address,
// or a redirect to one, is refused as the address itself is. The policy
// (core's domain.OutboundPolicy) says what is refused; this package only
// enforces it. It imports nothing of the project, so every adapter may
// share it.
package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// Policy is what a transport enforces.
type Policy interface {
	// Key names the policy: transports are shared between equal keys.
	Key() string
	// PermitsHost reports whether a URL's host may be reached whatever it
	// resolves to.
	PermitsHost(host string) bool
	// PermitsAddr returns nil when addr may be dialed, else why not.
	PermitsAddr(addr netip.Addr) error
}

// Options shape the transports a Transports hands out.
type Options struct {
	// Proxy picks a request's proxy, as http.Transport.Proxy does; nil for
	// none. A proxy is the server's own configuration (a setting, the
	// environment) and is dialed whatever its address; the request's own
	// host is then checked by resolving it here, since the proxy dials it.
	Proxy func(*http.Request) (*url.URL, error)
	// Tune adjusts each new transport (timeouts, pools); nil keeps
	// net/http's defaults.
	Tune func(*http.Transport)
}

// Transports hands out one RoundTripper per policy, reused, so the
// connections dialed for one policy are never reused by a request under
// another. Safe for concurrent use.
type Transports struct {
	o  Options
	mu sync.Mutex
	m  map[string]*guarded
}

// New returns Transports shaped by o.
func New(o Options) *Transports { return &Transports{o: o, m: map[string]*guarded{}} }

// maxPolicies bounds the cache: past it the transports of old policies
// (an allowlist edited many times) are dropped with their idle connections.
const maxPolicies = 32

// For returns the RoundTripper that enforces p.
func (t *Transports) For(p Policy) http.RoundTripper {
	key := p.Key()
	t.mu.Lock()
	defer t.mu.Unlock()
	if rt, ok := t.m[key]; ok {
		return rt
	}
	if len(t.m) >= maxPolicies {
		for k, g := range t.m {
			g.CloseIdleConnections()
			delete(t.m, k)
		}
	}
	g := t.build(p)
	t.m[key] = g
	return g
}

func (t *Transports) transport(proxy func(*http.Request) (*url.URL, error), control func(string, string, syscall.RawConn) error) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: control}
	tr := &http.Transport{Proxy: proxy, DialContext: d.DialContext, ForceAttemptHTTP2: true, MaxIdleConns: 100,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ExpectContinueTimeout: time.Second}
	if t.o.Tune != nil {
		t.o.Tune(tr)
	}
	return tr
}

func (t *Transports) build(p Policy) *guarded {
	check := func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		return p.PermitsAddr(ap.Addr())
	}
	g := &guarded{policy: p, proxy: t.o.Proxy, checked: t.transport(nil, check), open: t.transport(nil, nil)}
	if t.o.Proxy != nil {
		g.proxied = t.transport(t.o.Proxy, nil)
	}
	return g
}

// guarded routes each request: a host the policy names goes out unchecked;
// a proxied request has its host resolved and checked here first; any other
// dials through the address check.
type guarded struct {
	policy  Policy
	proxy   func(*http.Request) (*url.URL, error)
	checked *http.Transport // direct; the dial checks every address
	open    *http.Transport // direct, for hosts the policy permits by name
	proxied *http.Transport // through the proxy; nil without one
}

func (g *guarded) RoundTrip(r *http.Request) (*http.Response, error) {
	host := r.URL.Hostname()
	if g.proxied != nil {
		if u, err := g.proxy(r); err == nil && u != nil {
			if !g.policy.PermitsHost(host) {
				if err := g.checkResolved(r.Context(), host); err != nil {
					closeBody(r)
					return nil, err
				}
			}
			return g.proxied.RoundTrip(r)
		}
	}
	if g.policy.PermitsHost(host) {
		return g.open.RoundTrip(r)
	}
	return g.checked.RoundTrip(r)
}

// checkResolved checks every address host resolves to. A name this machine
// cannot resolve is left to the proxy, which may resolve what it cannot.
func (g *guarded) checkResolved(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return g.policy.PermitsAddr(a)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := g.policy.PermitsAddr(a); err != nil {
			return err
		}
	}
	return nil
}

// CloseIdleConnections closes the idle connections of every route, and
// lets http.Client.CloseIdleConnections reach them.
func (g *guarded) CloseIdleConnections() {
	g.checked.CloseIdleConnections()
	g.open.CloseIdleConnections()
	if g.proxied != nil {
		g.proxied.CloseIdleConnections()
	}
}

// closeBody honours RoundTrip's contract: the body is closed even when the
// request is refused.
func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

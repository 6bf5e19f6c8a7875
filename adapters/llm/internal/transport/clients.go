// Package transport builds the HTTP clients the model adapters call their
// providers with: one per proxy setting and outbound policy, reused across
// calls.
package transport

import (
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/egress"
	"github.com/agents-server/agents-server/ports"
)

// Clients caches the clients per proxy URL and outbound policy. It is safe
// for concurrent use; the zero value is ready.
type Clients struct {
	// Fixed, when set, is returned for every proxy and policy (tests, and
	// programs that bring their own client).
	Fixed *http.Client

	mu      sync.Mutex
	byProxy map[string]*egress.Transports
}

// For returns the client for a proxy URL ("" for none) under policy p.
// The error never quotes the URL, which may hold credentials.
func (c *Clients) For(proxy string, p domain.OutboundPolicy) (*http.Client, error) {
	if c.Fixed != nil {
		return c.Fixed, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts, ok := c.byProxy[proxy]
	if !ok {
		o := egress.Options{Tune: func(tr *http.Transport) {
			// Bounds a server that accepts the request and never answers;
			// the body of a long stream is not limited by it.
			tr.ResponseHeaderTimeout = 10 * time.Minute
		}}
		if proxy != "" {
			u, err := url.Parse(proxy)
			if err != nil || u.Host == "" {
				return nil, errors.New("the proxy URL is not of the form scheme://host:port")
			}
			o.Proxy = http.ProxyURL(u)
		}
		ts = egress.New(o)
		if c.byProxy == nil {
			c.byProxy = map[string]*egress.Transports{}
		}
		c.byProxy[proxy] = ts
	}
	return &http.Client{Transport: ts.For(p)}, nil
}

// ForEndpoint is For with the endpoint's proxy and policy, failing as the
// model error every adapter reports for a bad proxy URL.
func (c *Clients) ForEndpoint(ep ports.ProviderEndpoint) (*http.Client, error) {
	hc, err := c.For(ep.ProxyURL, ep.Outbound)
	if err != nil {
		return nil, &ports.ModelError{Kind: ports.ModelInvalid, Provider: ep.Name, Message: "invalid proxy URL: " + err.Error(), Err: err}
	}
	return hc, nil
}

// Refused is the model error of a call the outbound policy refused, or nil
// when err is no such refusal: a configuration error, never retried.
func Refused(provider string, err error) *ports.ModelError {
	var r *domain.OutboundRefusal
	if !errors.As(err, &r) {
		return nil
	}
	return &ports.ModelError{Kind: ports.ModelInvalid, Provider: provider, Message: "the base URL " + r.Error(), Err: err}
}

// Package transport builds the HTTP clients the model adapters call their
// providers with: one per proxy setting, reused across calls.
package transport

import (
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/agents-server/agents-server/ports"
)

// Clients caches an *http.Client per proxy URL. It is safe for concurrent
// use; the zero value is ready.
type Clients struct {
	// Fixed, when set, is returned for every proxy (tests).
	Fixed *http.Client

	mu      sync.Mutex
	clients map[string]*http.Client
}

// For returns the client for a proxy URL ("" for none), building it once.
// The error never quotes the URL, which may hold credentials.
func (c *Clients) For(proxy string) (*http.Client, error) {
	if c.Fixed != nil {
		return c.Fixed, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.clients[proxy]; ok {
		return hc, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Bounds a server that accepts the request and never answers; the body
	// of a long stream is not limited by it.
	tr.ResponseHeaderTimeout = 10 * time.Minute
	if proxy != "" {
		u, err := url.Parse(proxy)
		if err != nil || u.Host == "" {
			return nil, errors.New("the proxy URL is not of the form scheme://host:port")
		}
		tr.Proxy = http.ProxyURL(u)
	}
	hc := &http.Client{Transport: tr}
	if c.clients == nil {
		c.clients = map[string]*http.Client{}
	}
	c.clients[proxy] = hc
	return hc, nil
}

// ForEndpoint is For with the endpoint's proxy, failing as the model error
// every adapter reports for a bad proxy URL.
func (c *Clients) ForEndpoint(ep ports.ProviderEndpoint) (*http.Client, error) {
	hc, err := c.For(ep.ProxyURL)
	if err != nil {
		return nil, &ports.ModelError{Kind: ports.ModelInvalid, Provider: ep.Name, Message: "invalid proxy URL: " + err.Error(), Err: err}
	}
	return hc, nil
}

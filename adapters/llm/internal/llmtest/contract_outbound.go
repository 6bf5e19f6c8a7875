package llmtest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// testOutboundPolicy: an endpoint under a member's (strict) policy reaches
// no loopback server — by its address, by a name resolving to it, or
// through the proxy — and fails as a configuration error naming the
// settings, never retried; the allowlist, and an admin's (open) policy,
// let it through.
func testOutboundPolicy(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "the proxy was reached", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	byName := s.request("echo", User("hi"))
	byName.Endpoint.BaseURL = strings.Replace(byName.Endpoint.BaseURL, "127.0.0.1", "localhost", 1)
	throughProxy := s.request("echo", User("hi"))
	throughProxy.Endpoint.ProxyURL = proxy.URL
	for name, req := range map[string]ports.ModelRequest{"address": s.request("echo", User("hi")), "name": byName, "proxy": throughProxy} {
		req.Endpoint.Outbound = domain.OutboundPolicy{}
		_, _, err := s.generate(t, context.Background(), req, nil)
		var me *ports.ModelError
		if !errors.As(err, &me) || me.Kind != ports.ModelInvalid || me.Retryable() ||
			!strings.Contains(me.Error(), "outbound policy refuses") || !strings.Contains(me.Error(), domain.OutboundAllowPrivateSetting) {
			t.Fatalf("%s: %v, want a configuration error naming the outbound policy", name, err)
		}
	}
	if n := len(s.requests(t)); n != 0 || proxied.Load() != 0 {
		t.Fatalf("refused calls reached the server %d times and the proxy %d times", n, proxied.Load())
	}
	allowed := s.request("echo", User("allowed"))
	allowed.Endpoint.Outbound = domain.OutboundPolicy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	resp, _, err := s.generate(t, context.Background(), allowed, nil)
	if err != nil || len(resp.Output) != 1 || MessageText(t, resp.Output[0]) != "You said: allowed" {
		t.Fatalf("allowlisted: %v %s", err, resp.Output)
	}
}

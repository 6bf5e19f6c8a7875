package llmtest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Failures: whatever the vendor's words and shape, every adapter reports
// the same kind, retryability and wire code for the same failure.

// anyServerStatus stands for "a 5xx of the vendor's choosing" (each vendor
// has its own overloaded status).
const anyServerStatus = -1

// failureCase is a failure and the kind every adapter must make of it.
type failureCase struct {
	name   string
	fail   scripted.Failure
	kind   ports.ModelErrorKind
	status int
}

var failureCases = []failureCase{
	{"rate limited", scripted.Failure{Status: 429}, ports.ModelRateLimited, 429},
	{"server error", scripted.Failure{Status: 500}, ports.ModelUnavailable, 500},
	{"bad gateway", scripted.Failure{Status: 502}, ports.ModelUnavailable, 502},
	{"overloaded", scripted.Failure{Overloaded: true}, ports.ModelUnavailable, anyServerStatus},
	{"context overflow", scripted.Failure{Overflow: true}, ports.ModelOverflow, 400},
	{"invalid request", scripted.Failure{Status: 400, Message: "Invalid value for 'temperature'."}, ports.ModelInvalid, 400},
	{"model not found", scripted.Failure{Status: 404}, ports.ModelInvalid, 404},
	{"forbidden", scripted.Failure{Status: 403}, ports.ModelAuth, 403},
}

// testErrors: each vendor's error answer, before any stream, becomes the
// same *ports.ModelError kind with the status received.
func testErrors(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	for _, tc := range failureCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s.script(tc.name, scripted.Step{Text: "never sent", Error: &tc.fail})
			resp, c, err := s.generate(t, context.Background(), s.request(tc.name, User("x")), nil)
			checkFailure(t, s.ep, err, tc.kind, tc.status)
			if len(resp.Output) != 0 || len(c.Deltas) != 0 {
				t.Errorf("a failed call streamed %d deltas and returned %s", len(c.Deltas), resp.Output)
			}
		})
	}
}

// testErrorsMidStream: a failure reported as the vendor's error event after
// the stream began (status 200) is the same kind, with no status, and the
// text streamed before it is not returned as an answer.
func testErrorsMidStream(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	for _, tc := range failureCases {
		if tc.kind != ports.ModelRateLimited && tc.kind != ports.ModelUnavailable && tc.name != "invalid request" {
			continue // refusals of the request come before any stream (one is tried mid-stream too)
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fail := tc.fail
			fail.MidStream = true
			text := "A partial answer that never finishes."
			s.script(tc.name, scripted.Step{Text: text, ChunkSize: 8, Error: &fail})
			resp, c, err := s.generate(t, context.Background(), s.request(tc.name, User("x")), nil)
			checkFailure(t, s.ep, err, tc.kind, 0)
			if got, _ := c.Joined(ports.DeltaText); got != text || len(resp.Output) != 0 {
				t.Errorf("streamed %q and returned %s, want the text streamed and no answer", got, resp.Output)
			}
		})
	}
}

// checkFailure asserts err is a *ports.ModelError of kind from ep's
// provider with the status (anyServerStatus: a 5xx), a message, the
// retryability and wire code its kind implies, and not a context error.
func checkFailure(t *testing.T, ep ports.ProviderEndpoint, err error, kind ports.ModelErrorKind, status int) *ports.ModelError {
	t.Helper()
	var me *ports.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error %T %v is not a *ports.ModelError", err, err)
	}
	statusOK := me.Status == status || status == anyServerStatus && me.Status >= 500 && me.Status <= 599
	if me.Kind != kind || !statusOK || me.Provider != ep.Name || me.Message == "" {
		t.Fatalf("model error %+v, want kind %s status %d from %s with a message", me, kind, status, ep.Name)
	}
	retryable := kind == ports.ModelRateLimited || kind == ports.ModelUnavailable
	code := errs.Validation
	if retryable {
		code = errs.Upstream
	}
	if me.Retryable() != retryable || me.Coded().Code != code {
		t.Errorf("%s: retryable %v code %s, want %v %s", kind, me.Retryable(), me.Coded().Code, retryable, code)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a provider failure reads as a context error: %v", err)
	}
	return me
}

// testWrongKey: the vendor's 401 for a wrong key is an auth failure; the
// right key then works.
func testWrongKey(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{APIKey: "sk-right"})
	req := s.request("echo", User("hi"))
	req.Endpoint.APIKey = "sk-wrong"
	_, _, err := s.generate(t, context.Background(), req, nil)
	checkFailure(t, s.ep, err, ports.ModelAuth, 401)
	req.Endpoint.APIKey = "sk-right"
	resp, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil || len(resp.Output) != 1 || MessageText(t, resp.Output[0]) != "You said: hi" {
		t.Fatalf("with the right key: %v %s", err, resp.Output)
	}
}

// testRetryAfterFailures: retryable failures leave the adapter ready; the
// next attempt succeeds (the adapter itself never retries: one request
// per call).
func testRetryAfterFailures(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	s.script("m", scripted.Step{Text: "finally", FailTimes: 2, Error: &scripted.Failure{Status: 502}})
	for range 2 {
		_, _, err := s.generate(t, context.Background(), s.request("m", User("x")), nil)
		checkFailure(t, s.ep, err, ports.ModelUnavailable, 502)
	}
	resp, _, err := s.generate(t, context.Background(), s.request("m", User("x")), nil)
	if err != nil || len(resp.Output) != 1 || MessageText(t, resp.Output[0]) != "finally" {
		t.Fatalf("third attempt: %v %s", err, resp.Output)
	}
	if n := len(s.requests(t)); n != 3 {
		t.Errorf("%d requests for 3 calls: the adapter retried on its own", n)
	}
}

// testConnectionDropped: a server that drops the connection before any
// answer is unavailable, with no status. (The listener stays this test's
// own: a closed port could be taken by another process's server.)
func testConnectionDropped(t *testing.T, h Harness) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed at cleanup
			}
			_ = c.Close()
		}
	}()
	ep := h.Endpoint("http://" + ln.Addr().String())
	_, err = h.New().Generate(context.Background(), ports.ModelRequest{Endpoint: ep, Model: "m", Input: rawItems(User("x"))}, nil)
	checkFailure(t, ep, err, ports.ModelUnavailable, 0)
}

// testProxy: calls go through the endpoint's proxy (which sees each
// request's absolute URL, naming the server); a proxy URL that is not one is an invalid
// request that reaches no one.
func testProxy(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	var hits atomic.Int32
	target := strings.TrimPrefix(s.url, "http://")
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// only a proxy-form request for the scripted server counts: a
		// stray connection to this port is not the adapter's
		if !r.URL.IsAbs() || r.URL.Host != target {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		res, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(flushWriter{w}, res.Body)
	}))
	t.Cleanup(proxy.Close)
	req := s.request("echo", User("via proxy"))
	req.Endpoint.ProxyURL = proxy.URL
	resp, _, err := s.generate(t, context.Background(), req, nil)
	if err != nil || len(resp.Output) != 1 || MessageText(t, resp.Output[0]) != "You said: via proxy" {
		t.Fatalf("through the proxy: %v %s", err, resp.Output)
	}
	if hits.Load() != 1 {
		t.Errorf("the proxy saw %d requests, want 1", hits.Load())
	}
	req.Endpoint.ProxyURL = "::not a url"
	_, _, err = s.generate(t, context.Background(), req, nil)
	checkFailure(t, s.ep, err, ports.ModelInvalid, 0)
	if n := len(s.requests(t)); n != 1 {
		t.Errorf("a call with a bad proxy URL reached the server (%d requests)", n)
	}
}

// flushWriter flushes every write, so a proxied stream stays a stream.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.w.(http.Flusher).Flush()
	return n, err
}

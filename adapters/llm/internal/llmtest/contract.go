package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/ports"
)

// Capability is a promise of the model port that a wire format may truly
// lack; a Harness declares the ones its format lacks.
type Capability string

// The capabilities a format may lack.
const (
	// ReasoningHandedBack: the reasoning items an adapter returned reach the
	// provider again when the conversation continues (Responses reasoning
	// items, Messages signed thinking blocks), and reasoning made elsewhere
	// does not.
	ReasoningHandedBack Capability = "reasoning handed back"
)

var capabilities = []Capability{ReasoningHandedBack}

// Harness is how the contract drives one ports.LLM adapter over one wire
// format of the scripted model server.
type Harness struct {
	// Format is the protocol the adapter speaks to the server:
	// scripted.APIResponses, scripted.APIChatCompletions or
	// scripted.APIMessages. Every request the server records must be in it.
	Format string
	// New returns the adapter under test, built as production builds it.
	New func() ports.LLM
	// Endpoint points the adapter at a scripted server listening at
	// serverURL (scheme://host:port): name, type, API, base URL and a key.
	Endpoint func(serverURL string) ports.ProviderEndpoint
	// Lacks maps each capability the format truly lacks to the reason;
	// the subtests that need it skip saying so.
	Lacks map[Capability]string
}

// Contract runs the model port's promises against h's adapter, over real
// HTTP to the scripted model server, as parallel subtests: streamed text,
// reasoning, parallel tool calls, usage, structured output, each vendor's
// failures mapped to the same kinds, the proxy setting and cancellation.
// The caller must not change the process environment while it runs.
func Contract(t *testing.T, h Harness) {
	t.Helper()
	h.check(t)
	subtests := []struct {
		name string
		run  func(*testing.T, Harness)
	}{
		{"text", testText},
		{"no sink", testNoSink},
		{"reasoning", testReasoning},
		{"reasoning handed back", testReasoningHandedBack},
		{"parallel tool calls", testParallelToolCalls},
		{"usage", testUsage},
		{"structured output", testStructuredOutput},
		{"concurrent calls", testConcurrentCalls},
		{"errors", testErrors},
		{"errors mid-stream", testErrorsMidStream},
		{"wrong key", testWrongKey},
		{"retry after failures", testRetryAfterFailures},
		{"connection dropped", testConnectionDropped},
		{"proxy", testProxy},
		{"outbound policy", testOutboundPolicy},
		{"cancel mid-stream", testCancelMidStream},
		{"cancel before the call", testCancelBeforeTheCall},
		{"deadline mid-stream", testDeadlineMidStream},
	}
	for _, st := range subtests {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			st.run(t, h)
		})
	}
}

// check refuses a harness the contract cannot run.
func (h Harness) check(t *testing.T) {
	t.Helper()
	if h.Format != scripted.APIResponses && h.Format != scripted.APIChatCompletions && h.Format != scripted.APIMessages {
		t.Fatalf("harness format %q is none of the scripted server's", h.Format)
	}
	if h.New == nil || h.Endpoint == nil {
		t.Fatal("harness without New or Endpoint")
	}
	for c, reason := range h.Lacks {
		if !slices.Contains(capabilities, c) || reason == "" {
			t.Fatalf("harness lacks %q (%q): an unknown capability or no reason", c, reason)
		}
	}
}

// needs skips t, naming the reason, when h's format lacks c.
func (h Harness) needs(t *testing.T, c Capability) {
	t.Helper()
	if reason, ok := h.Lacks[c]; ok {
		t.Skipf("%s lacks %s: %s", h.Format, c, reason)
	}
}

// stage is one subtest's world: a scripted server on a local port, the
// adapter pointed at it, and what the server side saw.
type stage struct {
	h     Harness
	model *scripted.Server
	llm   ports.LLM
	ep    ports.ProviderEndpoint
	url   string // the server's, scheme://host:port
	watch *watch
}

func newStage(t *testing.T, h Harness, opts scripted.Options) *stage {
	t.Helper()
	s := &stage{h: h, model: scripted.New(opts), llm: h.New(), watch: &watch{ends: make(chan bool, 64)}}
	hs := httptest.NewUnstartedServer(s.watch.wrap(s.model.Handler()))
	hs.Config.ConnState = s.watch.connState
	hs.Start()
	t.Cleanup(hs.Close)
	s.url, s.ep = hs.URL, h.Endpoint(hs.URL)
	return s
}

// script makes model answer one exchange of steps.
func (s *stage) script(model string, steps ...scripted.Step) {
	s.model.SetScript(model, scripted.Script{Exchanges: []scripted.Exchange{{Steps: steps}}})
}

func (s *stage) request(model string, input ...json.RawMessage) ports.ModelRequest {
	return ports.ModelRequest{Endpoint: s.ep, Model: model, Input: input}
}

// generate calls the adapter with a collecting sink, failing t when a delta
// arrives on another goroutine or after Generate returned; onDelta, when
// set, sees each delta first.
func (s *stage) generate(t *testing.T, ctx context.Context, req ports.ModelRequest, onDelta func(ports.ModelDelta)) (ports.ModelResponse, *Collector, error) {
	var c Collector
	caller := goroutineID()
	var returned atomic.Bool
	resp, err := s.llm.Generate(ctx, req, func(d ports.ModelDelta) {
		if returned.Load() {
			t.Errorf("a %s delta arrived after Generate returned", d.Kind)
		}
		if id := goroutineID(); id != caller {
			t.Errorf("a %s delta arrived on goroutine %s, not the caller's %s", d.Kind, id, caller)
		}
		if onDelta != nil {
			onDelta(d)
		}
		c.Sink(d)
	})
	returned.Store(true)
	return resp, &c, err
}

// requests is what the server received, each checked to be in the
// harness's format.
func (s *stage) requests(t *testing.T) []scripted.Recorded {
	t.Helper()
	recs := s.model.Requests()
	for _, r := range recs {
		if r.API != s.h.Format {
			t.Fatalf("the adapter spoke %s, the harness says %s", r.API, s.h.Format)
		}
	}
	return recs
}

// goroutineID is the running goroutine's number, from its stack header
// ("goroutine 18 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	f := bytes.Fields(buf[:runtime.Stack(buf, false)])
	return string(f[1])
}

// holdLimit bounds how long the server side waits on the adapter; reaching
// it is a failure, never a pass.
const holdLimit = 10 * time.Second

// watch sees the scripted server's side: connections open, how each
// request's handler ended, and a gate that holds a stream.
type watch struct {
	open atomic.Int64 // connections accepted and not yet closed
	ends chan bool    // per finished request: its client went away first
	gate atomic.Pointer[gate]
}

func (w *watch) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		w.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		w.open.Add(-1)
	}
}

func (w *watch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if g := w.gate.Load(); g != nil {
			rw = &gatedWriter{ResponseWriter: rw, g: g}
		}
		next.ServeHTTP(rw, r)
		// read before the server cancels the context of a finished request
		select {
		case w.ends <- r.Context().Err() != nil:
		default:
		}
	})
}

// closedAll waits until every connection the adapter opened is closed, so no
// transport goroutine is left reading one.
func (w *watch) closedAll() bool {
	deadline := time.Now().Add(holdLimit)
	for w.open.Load() != 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// gate holds a stream right after the server flushed the event carrying
// marker, until the sink has seen that delta: an adapter that buffers the
// stream never releases it.
type gate struct {
	marker   []byte
	seen     chan struct{}
	once     sync.Once
	holding  atomic.Bool
	timedOut atomic.Bool
}

func (w *watch) holdAfter(marker string) *gate {
	g := &gate{marker: []byte(marker), seen: make(chan struct{})}
	w.gate.Store(g)
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.seen) }) }

type gatedWriter struct {
	http.ResponseWriter
	g      *gate
	armed  bool
	passed bool
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if !w.passed && bytes.Contains(p, w.g.marker) {
		w.armed = true
	}
	return w.ResponseWriter.Write(p)
}

func (w *gatedWriter) Flush() {
	hold := w.armed && !w.passed
	if hold {
		// set before the bytes leave, so the sink cannot see them first
		w.g.holding.Store(true)
		w.passed = true
	}
	w.ResponseWriter.(http.Flusher).Flush()
	if !hold {
		return
	}
	select {
	case <-w.g.seen:
	case <-time.After(holdLimit):
		w.g.timedOut.Store(true)
	}
	w.g.holding.Store(false)
}

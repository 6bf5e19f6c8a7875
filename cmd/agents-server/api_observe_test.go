package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// metricValue finds a sample's line in a text exposition: name{labels} v.
func metricLine(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// GET /metrics: the Prometheus text format to admins (403 to members),
// counting what a chat did — the run's ending, its model call by provider,
// the events, the request by route — and what the store holds.
func TestMetricsCountWhatRunsDid(t *testing.T) {
	t.Parallel()
	_, url := startScripted(t)
	cfg := testConfig(t)
	cfg.MetricsAddr = "127.0.0.1:0"
	h := startServer(t, cfg)
	ann := h.member("ann")
	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "echoer", "model": "echo"})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	if v := h.chat(ann, s.ID, "count me"); v.Status != "completed" {
		t.Fatalf("run = %+v", v)
	}
	h.call("GET", "/metrics", ann, nil).wantErr(t, 403, "forbidden")
	// The watchers hear a run's end just after its final event went out:
	// the count may trail the answer by a moment.
	var text string
	pollUntil(t, 10*time.Second, 10*time.Millisecond, func() bool {
		text = string(h.call("GET", "/metrics", h.admin, nil).want(t, 200).Body)
		return strings.Contains(text, `agents_runs_ended_total{code="",status="completed"} 1`+"\n")
	})
	for _, want := range []string{
		`agents_runs_ended_total{code="",status="completed"} 1`,
		`agents_model_call_duration_seconds_count{outcome="ok",provider="openai"} 1`,
		`agents_runs{status="completed"} 1`,
		`agents_approvals_waiting 0`,
		`agents_http_requests_total{method="POST",route="/api/v1/sessions/:id/runs",status="200"} 1`,
		`agents_runs_live 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in:\n%s", want, grepLines(text, "agents_"))
		}
	}
	if l := metricLine(text, "agents_events_total "); l == "" || l == "agents_events_total 0" {
		t.Errorf("events: %q", l)
	}
	// The chat's writes (its run, its turns, its end) were timed, each
	// with its wait for the writer (some are transactions on either engine).
	for _, name := range []string{"agents_store_write_duration_seconds_count ", "agents_store_write_lock_wait_seconds_count "} {
		if l := metricLine(text, name); l == "" || l == name+"0" {
			t.Errorf("store writes: %q", l)
		}
	}
	// The separate listener serves the same registry without a token.
	resp, err := http.Get("http://" + workbenchparts.Of(h.app.wb).MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `agents_runs_ended_total{code="",status="completed"} 1`) {
		t.Fatalf("--metrics-addr: %d\n%.300s", resp.StatusCode, body)
	}
}

// /metrics labels come from bounded sets, never from what a model or a
// member typed: tool names the model invented are counted as one unknown
// tool with an error outcome (300 of them once made 300 series counted ok),
// a built-in keeps its name, and model calls are labelled by provider type,
// never by the provider's name.
func TestMetricsLabelToolsAndProvidersByBoundedSets(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	var calls []scripted.ToolCall
	for i := range 30 {
		calls = append(calls, scripted.ToolCall{Name: fmt.Sprintf("invented_tool_%d", i)})
	}
	calls = append(calls, scripted.ToolCall{Name: "todo_write", Arguments: `{"todos":[{"content":"a","status":"pending"}]}`})
	model.SetScript("inventor", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: calls}, {Text: "done inventing"}}}}})
	h := startServer(t, testConfig(t))
	ann := h.member("ann")
	provider := map[string]any{"name": "Ann's team gateway", "type": "openai", "api": "responses", "base_url": url + "/v1", "api_key": "sk-test"}
	agent := h.agentOn(ann, provider, map[string]any{"name": "inventor", "model": "inventor"})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	if v := h.chat(ann, s.ID, "call things"); v.Status != "completed" {
		t.Fatalf("run = %+v", v)
	}
	text := string(h.call("GET", "/metrics", h.admin, nil).want(t, 200).Body)
	for _, want := range []string{
		`agents_tool_calls_total{outcome="error",tool="unknown"} 30`,
		`agents_tool_calls_total{outcome="ok",tool="todo_write"} 1`,
		`agents_model_call_duration_seconds_count{outcome="ok",provider="openai"} 2`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in:\n%s", want, grepLines(text, "agents_"))
		}
	}
	for _, never := range []string{"invented_tool", "Ann's team gateway"} {
		if strings.Contains(text, never) {
			t.Errorf("%q is a label:\n%s", never, grepLines(text, "agents_"))
		}
	}
	// The trace says an invented call failed, and what it was; a
	// built-in's call carries its origin and succeeded.
	failed, ok := 0, 0
	for _, sp := range h.traces(ann, s.ID, "?summary=true") {
		switch {
		case sp.Kind != "function":
		case strings.HasPrefix(sp.Name, "invented_tool_") && sp.Error != "" && sp.Meta["origin"] == "unknown":
			failed++
		case sp.Name == "todo_write" && sp.Error == "" && sp.Meta["origin"] == "checklist":
			ok++
		default:
			t.Errorf("span %s: error %q, meta %v", sp.Name, sp.Error, sp.Meta)
		}
	}
	if failed != 30 || ok != 1 {
		t.Fatalf("%d failed invented calls, %d built-in ones; want 30 and 1", failed, ok)
	}
}

// grepLines keeps the lines with a prefix, for a readable failure.
func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// otlpSink is an OTLP/HTTP traces receiver: the spans exporters send it.
type otlpSink struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	raw   [][]byte
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", 400)
		return
	}
	s.mu.Lock()
	s.raw = append(s.raw, body)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			s.spans = append(s.spans, ss.Spans...)
		}
	}
	s.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// With --otlp-endpoint every run is a trace: the run's span, under it the
// agent's, under that the model call's, with the facts and without the
// conversation.
func TestRunsExportAsOpenTelemetryTraces(t *testing.T) {
	t.Parallel()
	_, url := startScripted(t)
	sink := &otlpSink{}
	collector := httptest.NewServer(sink)
	t.Cleanup(collector.Close)
	cfg := testConfig(t)
	cfg.OTLPEndpoint = collector.URL + "/v1/traces"
	h := startServer(t, cfg)
	ann := h.member("ann")
	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "echoer", "model": "echo"})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	v := h.chat(ann, s.ID, "private words 51f0")
	h.stop() // the exporter sends its batch on the way out

	byName := map[string]*tracepb.Span{}
	for _, sp := range sink.spans {
		byName[strings.Fields(sp.Name)[0]] = sp
	}
	run, agentSpan, gen := byName["run"], byName["agent"], byName["generation"]
	if run == nil || agentSpan == nil || gen == nil {
		t.Fatalf("exported %d spans: %v", len(sink.spans), byName)
	}
	if !bytes.Equal(run.TraceId, gen.TraceId) || !bytes.Equal(agentSpan.ParentSpanId, run.SpanId) ||
		!bytes.Equal(gen.ParentSpanId, agentSpan.SpanId) || len(run.ParentSpanId) != 0 {
		t.Fatalf("the tree: run %x/%x, agent parent %x, generation parent %x (agent %x)", run.TraceId, run.SpanId,
			agentSpan.ParentSpanId, gen.ParentSpanId, agentSpan.SpanId)
	}
	attrs := map[string]string{}
	for _, kv := range gen.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	if attrs["agents.provider"] != "scripted-responses" || attrs["agents.run_id"] != v.RunID || attrs["agents.model"] != "echo" {
		t.Fatalf("generation attributes: %v", attrs)
	}
	if time.Duration(gen.EndTimeUnixNano-gen.StartTimeUnixNano) < 0 || run.EndTimeUnixNano < gen.EndTimeUnixNano {
		t.Fatalf("times: run ends %d, generation %d…%d", run.EndTimeUnixNano, gen.StartTimeUnixNano, gen.EndTimeUnixNano)
	}
	for _, b := range sink.raw {
		if bytes.Contains(b, []byte("51f0")) {
			t.Fatal("the conversation was exported")
		}
	}
}

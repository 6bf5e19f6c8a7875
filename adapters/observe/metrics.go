// Package observe lets a team watch the workbench with the tools it
// already runs: Prometheus metrics (client_golang) and OpenTelemetry traces
// exported over OTLP. It hears runs and spans through ports.RunObserver and
// HTTP requests through the API's observe hook; it reads nothing core does
// not hand it.
package observe

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/tools"
)

// Counts are what the store says at a scrape: runs by status, approvals
// waiting for a person, tasks by status.
type Counts struct {
	RunsByStatus     map[string]int64
	ApprovalsWaiting int64
	TasksByStatus    map[string]int64
}

// Sources are read at every scrape.
type Sources struct {
	Hub    func() hub.Stats
	Counts func(ctx context.Context) (Counts, error)
}

// Metrics is the Prometheus registry of the workbench: Go and process
// metrics plus the agents_* families below.
type Metrics struct {
	reg       *prometheus.Registry
	runsEnded *prometheus.CounterVec
	modelDur  *prometheus.HistogramVec
	modelErrs *prometheus.CounterVec
	toolCalls *prometheus.CounterVec
	httpReqs  *prometheus.CounterVec
	httpDur   *prometheus.HistogramVec
	writeDur  prometheus.Histogram
	lockWait  prometheus.Histogram
	tokens    *prometheus.CounterVec
	cost      *prometheus.CounterVec
}

// storeBuckets span a write's life, from a lone statement on a quiet store
// (100 µs) to writers queued behind a busy one (seconds).
var storeBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// NewMetrics registers every family; src is read at each scrape.
func NewMetrics(src Sources) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg,
		runsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_runs_ended_total",
			Help: "Runs that ended since the start, by final status (completed, error, cancelled) and error code."},
			[]string{"status", "code"}),
		modelDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agents_model_call_duration_seconds",
			Help:    "Model calls (generation spans) by provider type (openai, anthropic, chatgpt, a program's own) and outcome: the whole streamed call.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}}, []string{"provider", "outcome"}),
		modelErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_model_call_errors_total",
			Help: "Model calls that failed, by provider type."}, []string{"provider"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_tool_calls_total",
			Help: "Tool calls (function spans) by tool (a built-in's name; mcp, native or handoff for tools named by people; unknown for one the run did not offer) and outcome (error when the call failed or answered an error)."},
			[]string{"tool", "outcome"}),
		httpReqs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_http_requests_total",
			Help: "HTTP requests by route (the route table's path), method and status."}, []string{"route", "method", "status"}),
		httpDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agents_http_request_duration_seconds",
			Help: "HTTP request durations by route (streams last as long as they are open).", Buckets: prometheus.DefBuckets},
			[]string{"route", "method"}),
		writeDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agents_store_write_duration_seconds",
			Help: "Writes to the store (a run's turn records, seq marks and end among them), from asking for the writer to the commit's answer, " +
				"waiting for the right to write included.", Buckets: storeBuckets}),
		lockWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "agents_store_write_lock_wait_seconds",
			Help: "How long a write transaction waited until it held the right to write: a connection and the write lock every replica's writers share on Postgres, " +
				"the one writer connection on SQLite (its lone statements are not counted: their wait is not known apart). " +
				"A write's duration less this wait is how long it held the lock.", Buckets: storeBuckets}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_model_tokens_total",
			Help: "Tokens of the model calls recorded since the start, by provider type, model and what they were: input (cached_input and reasoning are parts of input and output)."},
			[]string{"provider", "model", "type"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agents_model_cost_dollars_total",
			Help: "What the model calls recorded since the start cost, in US dollars at the price table's figures, by provider type and model (calls on a model with no price add nothing)."},
			[]string{"provider", "model"}),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runsEnded, m.modelDur, m.modelErrs, m.toolCalls, m.httpReqs, m.httpDur, m.writeDur, m.lockWait, m.tokens, m.cost, &scraped{src: src})
	return m
}

// Handler serves the registry in the Prometheus text format, uncompressed:
// the API's own middleware compresses what it serves, and a second gzip
// under it would reach clients as bytes no header explains.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, DisableCompression: true})
}

// RunEnded counts a run's ending.
func (m *Metrics) RunEnded(r domain.Run) {
	m.runsEnded.WithLabelValues(string(r.Status), r.ErrorCode).Inc()
}

// SpanSaved times model calls and counts tool calls. Every label comes
// from a bounded set: a model's and a person's words (a tool name the model
// invented, a provider's name) would make a series each.
func (m *Metrics) SpanSaved(s domain.Span) {
	outcome := "ok"
	if failed, _ := s.Meta["is_error"].(bool); failed || s.Error != "" {
		outcome = "error"
	}
	switch s.Kind {
	case domain.SpanGeneration:
		provider, _ := s.Meta["provider_type"].(string)
		if provider == "" {
			provider = "unknown"
		}
		m.modelDur.WithLabelValues(provider, outcome).Observe(s.EndedAt.Sub(s.StartedAt).Seconds())
		if s.Error != "" {
			m.modelErrs.WithLabelValues(provider).Inc()
		}
	case domain.SpanFunction:
		m.toolCalls.WithLabelValues(toolLabel(s), outcome).Inc()
	}
}

// UsageRecorded counts a recorded model call's tokens and cost. Its
// labels name no person: a team's spending by person is the usage
// report's, behind an admin's sign-in.
func (m *Metrics) UsageRecorded(r domain.UsageRecord) {
	for typ, n := range map[string]int64{"input": r.InputTokens, "cached_input": r.CachedInputTokens, "output": r.OutputTokens, "reasoning": r.ReasoningTokens} {
		m.tokens.WithLabelValues(r.ProviderType, r.Model, typ).Add(float64(n))
	}
	if r.Priced {
		m.cost.WithLabelValues(r.ProviderType, r.Model).Add(float64(r.CostMicros) / 1e6)
	}
}

// toolLabel labels a tool call: a built-in by its name (the workbench
// fixes those), any other offered tool by its origin (an MCP server's or a
// program's tools are named by people), and a call of a tool the run did
// not offer as unknown.
func toolLabel(s domain.Span) string {
	switch origin, _ := s.Meta["origin"].(string); {
	case origin == "" || origin == tools.OriginUnknown:
		return tools.OriginUnknown
	case origin != tools.OriginMCP && origin != tools.OriginNative && origin != tools.OriginHandoff && tools.IsBuiltin(s.Name):
		return s.Name
	default:
		return origin
	}
}

// Request counts one HTTP request; route is the route table's path ("" for
// one that matched none).
func (m *Metrics) Request(method, route string, status int, took time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.httpReqs.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpDur.WithLabelValues(route, method).Observe(took.Seconds())
}

// StoreWrite times one write to the store: waited for the right to write
// (negative: not known apart), took in all.
func (m *Metrics) StoreWrite(waited, took time.Duration) {
	m.writeDur.Observe(took.Seconds())
	if waited >= 0 {
		m.lockWait.Observe(waited.Seconds())
	}
}

// scraped collects what is read at each scrape: the hub's counts and the
// store's.
type scraped struct{ src Sources }

var (
	descEvents    = prometheus.NewDesc("agents_events_total", "Run events numbered and fanned out since the start.", nil, nil)
	descGaps      = prometheus.NewDesc("agents_event_gaps_total", "run.gap events handed to watchers since the start (a watcher too slow, or a stream reopened after a restart).", nil, nil)
	descLive      = prometheus.NewDesc("agents_runs_live", "Runs executing or paused on this server now.", nil, nil)
	descRuns      = prometheus.NewDesc("agents_runs", "Runs in the store by status.", []string{"status"}, nil)
	descApprovals = prometheus.NewDesc("agents_approvals_waiting", "Tool calls waiting for a person's decision.", nil, nil)
	descTasks     = prometheus.NewDesc("agents_tasks", "Background tasks in the store by status.", []string{"status"}, nil)
)

// Describe implements prometheus.Collector.
func (c *scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEvents, descGaps, descLive, descRuns, descApprovals, descTasks} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *scraped) Collect(ch chan<- prometheus.Metric) {
	if c.src.Hub != nil {
		st := c.src.Hub()
		ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(st.Events))
		ch <- prometheus.MustNewConstMetric(descGaps, prometheus.CounterValue, float64(st.Gaps))
		ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(st.LiveRuns))
	}
	if c.src.Counts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.src.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRuns, err)
		return
	}
	for status, v := range n.RunsByStatus {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.GaugeValue, float64(v), status)
	}
	ch <- prometheus.MustNewConstMetric(descApprovals, prometheus.GaugeValue, float64(n.ApprovalsWaiting))
	for status, v := range n.TasksByStatus {
		ch <- prometheus.MustNewConstMetric(descTasks, prometheus.GaugeValue, float64(v), status)
	}
}

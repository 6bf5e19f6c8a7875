package workbench

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agents-server/agents-server/adapters/observe"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports"
)

// watchers is how the workbench is watched from outside: the metrics
// always, trace export and a separate metrics listener when configured.
type watchers struct {
	metrics *observe.Metrics
	traces  *observe.Traces // nil: no Options.OTLPEndpoint
	server  *http.Server    // nil: no Options.MetricsAddr
	ln      net.Listener
}

// newWatchers builds the metrics on the hub and the store, and the trace
// exporter and the metrics listener the config asks for.
func newWatchers(ctx context.Context, o Options, h *hub.Hub, db *sqlstore.DB, log *slog.Logger) (*watchers, error) {
	w := &watchers{metrics: observe.NewMetrics(observe.Sources{Hub: h.Stats, Counts: func(ctx context.Context) (observe.Counts, error) {
		runs, waiting, tasks, err := db.StatusCounts(ctx)
		return observe.Counts{RunsByStatus: runs, ApprovalsWaiting: waiting, TasksByStatus: tasks}, err
	}})}
	// Every write's timing, so a team sees whether its writers queue.
	db.ObserveWrites(w.metrics)
	if o.OTLPEndpoint != "" {
		t, err := observe.NewTraces(ctx, o.OTLPEndpoint, o.Version)
		if err != nil {
			return nil, errs.Wrap(errs.Validation, err, "OTLP endpoint")
		}
		w.traces = t
	}
	if o.MetricsAddr != "" {
		ln, err := net.Listen("tcp", o.MetricsAddr)
		if err != nil {
			return nil, errs.Wrap(errs.Unavailable, err, "cannot listen on the metrics address %s", o.MetricsAddr)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", w.metrics.Handler())
		w.ln, w.server = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		log.Info("metrics served without a token", "url", "http://"+ln.Addr().String()+"/metrics")
		go func() {
			if err := w.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("the metrics listener stopped; /metrics on the API still serves admins", "err", err)
			}
		}()
	}
	return w, nil
}

// observer is what the run engine tells: the metrics, and the exporter.
func (w *watchers) observer() ports.RunObserver {
	if w.traces == nil {
		return w.metrics
	}
	return both{w.metrics, w.traces}
}

// close sends the batched traces and stops the metrics listener.
func (w *watchers) close(ctx context.Context) {
	if w.server != nil {
		_ = w.server.Shutdown(ctx)
	}
	if w.traces != nil {
		_ = w.traces.Shutdown(ctx)
	}
}

// both tells two observers.
type both [2]ports.RunObserver

func (b both) RunEnded(r domain.Run) {
	b[0].RunEnded(r)
	b[1].RunEnded(r)
}

func (b both) SpanSaved(s domain.Span) {
	b[0].SpanSaved(s)
	b[1].SpanSaved(s)
}

package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/errs"
)

// Health is the answer of GET /health.
type Health struct {
	Status  string `json:"status" doc:"ok once the store answers and requests are accepted"`
	Version string `json:"version"`
}

// ServerInfo is the answer of GET /api/v1/server: process facts a client is
// subject to but cannot change.
type ServerInfo struct {
	Version  string `json:"version"`
	TimeZone string `json:"time_zone" doc:"IANA name of the server's local time zone (cron schedules run in it)"`
}

func (s *Server) systemRoutes() []Route {
	return []Route{
		op(http.MethodGet, "/health", "getHealth", "system",
			"Liveness and readiness: 200 once migrations ran and requests are accepted, 503 while draining",
			http.StatusOK, s.handleHealth).PublicRoute().WithRefusals(http.StatusServiceUnavailable),
		raw(http.MethodGet, APIPrefix+"/openapi.yaml", "getOpenAPI", "system",
			"This OpenAPI document (YAML)", "application/yaml", s.handleOpenAPI).PublicRoute(),
		op(http.MethodGet, APIPrefix+"/server", "getServer", "system",
			"Server facts: version and time zone", http.StatusOK, s.handleServerInfo),
		raw(http.MethodGet, "/metrics", "getMetrics", "system",
			"Prometheus metrics in the text exposition format (admins; --metrics-addr serves them apart, without a token)",
			"text/plain", s.handleMetrics).WithRefusals(http.StatusForbidden, http.StatusNotFound),
	}
}

func (s *Server) handleMetrics(c echo.Context) error {
	if err := caller(c).RequireAdmin(); err != nil {
		return err
	}
	if s.deps.Metrics == nil {
		return errs.E(errs.NotFound, "metrics are not served by this server")
	}
	s.deps.Metrics.ServeHTTP(c.Response(), c.Request())
	return nil
}

func (s *Server) handleHealth(c echo.Context, _ *NoBody) (Health, error) {
	if err := s.deps.Ready(c.Request().Context()); err != nil {
		return Health{}, errs.Wrap(errs.Unavailable, err, "the store is not answering")
	}
	return Health{Status: "ok", Version: s.deps.Version}, nil
}

func (s *Server) handleOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", s.openapi)
}

func (s *Server) handleServerInfo(c echo.Context, _ *NoBody) (ServerInfo, error) {
	return ServerInfo{Version: s.deps.Version, TimeZone: TimeZoneName(time.Local)}, nil
}

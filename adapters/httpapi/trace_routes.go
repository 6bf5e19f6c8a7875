package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
)

// PlaygroundRequest replays a stored generation span, with optional edits.
type PlaygroundRequest struct {
	SpanID        string                `json:"span_id" required:"true" doc:"A generation span of one of the caller's sessions"`
	Model         *string               `json:"model,omitempty"`
	Instructions  *string               `json:"instructions,omitempty"`
	Input         []json.RawMessage     `json:"input,omitempty" doc:"Responses items replacing the span's input"`
	Tools         []PlaygroundTool      `json:"tools,omitempty"`
	ModelSettings *domain.ModelSettings `json:"model_settings,omitempty"`
}

// PlaygroundTool is a function tool offered to the replayed call.
type PlaygroundTool struct {
	Name        string          `json:"name" required:"true"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// PlaygroundResult is the replayed call's answer.
type PlaygroundResult struct {
	Output     []json.RawMessage `json:"output" doc:"The model's output items (Responses shape)"`
	Text       string            `json:"text" doc:"The assistant text, joined"`
	Usage      domain.Usage      `json:"usage"`
	Model      string            `json:"model"`
	ResponseID string            `json:"response_id,omitempty"`
}

func (s *Server) traceRoutes() []Route {
	pg := op(http.MethodPost, APIPrefix+"/playground/generate", "playgroundGenerate", "playground",
		"Replay a stored generation span's request (optionally edited) against its provider", http.StatusOK, s.handlePlayground).
		WithRefusals(http.StatusBadGateway)
	// The one route carrying more than 1 MiB: a whole stored span payload.
	pg.BodyLimitFunc = s.playgroundLimit
	return []Route{
		op(http.MethodGet, APIPrefix+"/sessions/:id/traces", "listTraces", "traces",
			"The session's trace spans, oldest first: all, or the newest limit, paging back with before_id; summary=true leaves payloads out (payload_omitted)",
			http.StatusOK, s.handleListTraces).
			WithQuery(QueryParam{Name: "summary", Type: "boolean", Description: "Leave payloads out"},
				QueryParam{Name: "limit", Type: "integer", Description: "Newest N spans; omit for all", Bound: between(1, traces.MaxPageLimit)},
				QueryParam{Name: "before_id", Type: "string", Description: "Exclusive upper bound: the span_id of the oldest span received"}).
			WithRefusals(http.StatusBadRequest),
		op(http.MethodGet, APIPrefix+"/sessions/:id/traces/:span_id", "getTrace", "traces",
			"One span, whole", http.StatusOK, s.handleGetTrace),
		pg,
	}
}

// playgroundLimit is trace_span_data_kb plus 256 KB of edits and framing.
func (s *Server) playgroundLimit(c echo.Context) int64 {
	kb, err := s.deps.Settings.Int(c.Request().Context(), settings.KeyTraceSpanDataKB)
	if err != nil || kb <= 0 {
		kb = 1024
	}
	return int64(kb+256) << 10
}

func (s *Server) handleListTraces(c echo.Context, _ *NoBody) ([]traces.SpanPayload, error) {
	summary, err := boolQuery(c, "summary")
	if err != nil {
		return nil, err
	}
	page := ports.SpanPage{BeforeID: c.QueryParam("before_id")}
	if page.Limit, err = limitQuery(c); err != nil {
		return nil, err
	}
	list, err := s.deps.Traces.List(c.Request().Context(), caller(c), c.Param("id"), summary, page)
	return mapAll(list, traces.SpanView), err
}

func (s *Server) handleGetTrace(c echo.Context, _ *NoBody) (traces.SpanPayload, error) {
	sp, err := s.deps.Traces.Get(c.Request().Context(), caller(c), c.Param("id"), c.Param("span_id"))
	return traces.SpanView(sp), err
}

func (s *Server) handlePlayground(c echo.Context, req *PlaygroundRequest) (PlaygroundResult, error) {
	in := models.PlaygroundRequest{SpanID: req.SpanID, Model: req.Model, Instructions: req.Instructions, Input: req.Input, Settings: req.ModelSettings}
	for _, t := range req.Tools {
		in.Tools = append(in.Tools, ports.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	resp, err := s.deps.Models.Playground(c.Request().Context(), caller(c), in)
	if err != nil {
		return PlaygroundResult{}, err
	}
	out := resp.Output
	if out == nil {
		out = []json.RawMessage{}
	}
	text := ""
	for _, raw := range out {
		if it := domain.ParseItem(raw); it.Kind() == "message" {
			text += it.Text()
		}
	}
	return PlaygroundResult{Output: out, Text: text, Usage: resp.Usage, Model: resp.Model, ResponseID: resp.ResponseID}, nil
}

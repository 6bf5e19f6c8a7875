package usage

import (
	"context"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/ports"
)

// Meter is the model port with usage in front: each call is checked
// against the budgets that apply to it before it is sent, and recorded,
// priced, once it ends — answered, failed or cancelled, with what the
// provider reported.
type Meter struct {
	llm ports.LLM
	s   *Service
}

// Meter returns llm metered by the service.
func (s *Service) Meter(llm ports.LLM) *Meter { return &Meter{llm: llm, s: s} }

// Generate implements ports.LLM.
func (m *Meter) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	call, _ := ports.UsageCallOf(ctx)
	if err := m.s.Admit(ctx, call, req.Endpoint.ProviderID); err != nil {
		return ports.ModelResponse{}, err
	}
	resp, err := m.llm.Generate(ctx, req, sink)
	outcome := domain.UsageOK
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
		outcome = domain.UsageCancelled
	case err != nil:
		outcome = domain.UsageFailed
	}
	m.s.record(context.WithoutCancel(ctx), call, req, resp, outcome)
	return resp, err
}

// Models implements ports.LLM: listing models is not a metered call.
func (m *Meter) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	return m.llm.Models(ctx, ep)
}

// record stores one call's usage. A call the store cannot record still
// answered: the failure is logged, not the caller's.
func (s *Service) record(ctx context.Context, call ports.UsageCall, req ports.ModelRequest, resp ports.ModelResponse, outcome string) {
	u := resp.Usage
	kind := call.Kind
	if kind == "" {
		kind = domain.UsageChat
	}
	rec := domain.UsageRecord{ID: s.d.IDs.NewID(), At: s.d.Clock.Now(), UserID: call.UserID, AgentID: call.AgentID,
		ProviderID: req.Endpoint.ProviderID, ProviderType: models.ProviderType(req.Endpoint), Model: req.Model,
		SessionID: call.SessionID, RunID: call.RunID, TaskID: call.TaskID, Kind: kind, Outcome: outcome,
		InputTokens: u.InputTokens, CachedInputTokens: u.CachedTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens}
	price, ok, err := s.priceOf(ctx, rec.ProviderType, req.Model, resp.Model)
	if err != nil {
		s.d.Log.Warn("reading a model's price failed; the call is recorded without one", "model", req.Model, "err", err)
	}
	if ok {
		rec.CostMicros, rec.Priced = price.Cost(rec), true
	}
	if err := s.d.Store.RecordUsage(ctx, rec); err != nil {
		s.d.Log.Error("recording a model call's usage failed", "run_id", call.RunID, "model", req.Model, "err", err)
		return
	}
	if s.d.Recorded != nil {
		s.d.Recorded(rec)
	}
}

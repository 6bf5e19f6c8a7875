package runs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
)

// attempt is one model to try: the agent's own, then each fallback.
type attempt struct {
	endpoint ports.ProviderEndpoint
	model    string
	index    int // 0 the agent's model, n the n-th fallback
}

// generate makes the turn's model call: the agent's model with its retry
// policy, then each fallback in order. Every retry and fallback is a
// run.diagnostic and a zero-duration span; every call is a generation span.
func (s *Service) generate(ctx context.Context, rc *runCtx, req ports.ModelRequest) (ports.ModelResponse, error) {
	a := rc.agent.Agent
	try := attempt{endpoint: req.Endpoint, model: req.Model}
	fallbacks := a.Resilience.FallbackModels
	var last error
	for i := 0; ; i++ {
		resp, err := s.withRetries(ctx, rc, req, try)
		if err == nil || ctx.Err() != nil {
			return resp, err
		}
		last = err
		var me *ports.ModelError
		if !errors.As(err, &me) || me.Kind == ports.ModelOverflow || i >= len(fallbacks) {
			return resp, last
		}
		fb := fallbacks[i]
		ep, epErr := s.d.Models.Endpoint(ctx, fb.ProviderID, a.Name)
		if epErr != nil {
			return resp, last
		}
		try = attempt{endpoint: ep, model: fb.Model, index: i + 1}
		s.diagnostic(rc, "model_fallback", string(me.Kind), "falling back to "+fb.Model+" on "+ep.Name,
			map[string]string{"model": fb.Model, "provider": ep.Name, "fallback_index": strconv.Itoa(i + 1)})
		rc.tr.Span(domain.SpanRetry, "fallback "+fb.Model, rc.parentSpan()).Meta("reason", me.Error()).Meta("model", fb.Model).Zero(nil)
	}
}

// withRetries calls one model, retrying retryable failures when the agent
// asks for it, with jittered exponential backoff.
func (s *Service) withRetries(ctx context.Context, rc *runCtx, req ports.ModelRequest, try attempt) (ports.ModelResponse, error) {
	backoff := models.BackoffOf(rc.agent.Agent.Resilience)
	req.Endpoint, req.Model = try.endpoint, try.model
	for n := 0; ; n++ {
		resp, err := s.call(ctx, rc, req, try)
		var me *ports.ModelError
		if err == nil || ctx.Err() != nil || !errors.As(err, &me) || !me.Retryable() || n >= backoff.Retries {
			return resp, err
		}
		s.diagnostic(rc, "model_retry", string(me.Kind), me.Error(), map[string]string{"attempt": strconv.Itoa(n + 1), "model": try.model})
		rc.tr.Span(domain.SpanRetry, "retry "+try.model, rc.parentSpan()).Meta("attempt", n+1).Meta("reason", me.Error()).Zero(nil)
		select {
		case <-ctx.Done():
			return resp, ctx.Err()
		case <-time.After(backoff.Wait()):
		}
	}
}

// call is one model call, recorded as a generation span. Non-blocking
// input guardrails race it: a trip cancels the call.
func (s *Service) call(ctx context.Context, rc *runCtx, req ports.ModelRequest, try attempt) (ports.ModelResponse, error) {
	sp := rc.tr.Span(domain.SpanGeneration, req.Model, rc.parentSpan()).Meta("model", req.Model).Meta("provider", try.endpoint.Name).
		Meta("provider_type", models.ProviderType(try.endpoint)).Meta("fallback_index", try.index).Meta("provider_id", rc.agent.ProviderOf(try.index)).
		Set("model", req.Model, false).Set("system_instructions", req.Instructions, true).Set("input", req.Input, true).
		Set("tools", req.Tools, false).Set("model_settings", req.Settings, false).Set("handoffs", rc.agent.HandoffNames(), false).
		Set("output_schema", req.OutputSchema, false)
	callCtx, cancel := context.WithCancel(s.charged(ctx, rc, domain.UsageChat))
	defer cancel()
	var trip error
	raced := make(chan struct{})
	go func() {
		defer close(raced)
		if err := rc.agent.Guard(domain.StageInput, rc.raceInput, false, rc.tr, rc.parentSpan()); err != nil {
			trip = err
			cancel()
		}
	}()
	rc.partial.Reset()
	rc.checkpoint.begin(s.d.Clock.Now())
	if rc.images == nil {
		rc.images = attachments.NewInliner(s.d.Attachments, s.d.Log)
	}
	withImages := req
	withImages.Input = rc.images.Inline(ctx, req.Input)
	resp, err := s.d.LLM.Generate(callCtx, withImages, func(d ports.ModelDelta) {
		if d.Kind == ports.DeltaText {
			rc.partial.WriteString(d.Text)
			s.saveProgress(rc, false)
		}
		s.delta(rc.lr, d)
	})
	s.noteDropped(rc, sp, try, resp.Dropped)
	if err == nil {
		rc.partial.Reset() // the answer is whole: its items carry it
		if rc.checkpoint.holdsText {
			s.saveProgress(rc, true)
		}
	} else {
		err = attachments.Refusal(err, req.Input)
	}
	<-raced
	rc.raceInput = "" // the racing check applies to the first call only
	if trip != nil {
		sp.Finish(trip)
		return resp, trip
	}
	if err == nil {
		sp.Meta("usage", resp.Usage).Meta("response_id", resp.ResponseID).Meta("model_used", resp.Model).
			Set("output", json.RawMessage(mustItems(resp.Output)), true).Set("usage", resp.Usage, false)
	}
	sp.Finish(err)
	return resp, err
}

// noteDropped records the settings the provider left out of a call on its
// span, and tells the run's watchers the first time only: the agent's
// next turns drop the same ones, and one notice says it.
func (s *Service) noteDropped(rc *runCtx, sp *traces.OpenSpan, try attempt, dropped []string) {
	if len(dropped) == 0 {
		return
	}
	sp.Meta("dropped_settings", dropped)
	if rc.noted["settings_dropped"] {
		return
	}
	rc.noted["settings_dropped"] = true
	list := strings.Join(dropped, ", ")
	s.diagnostic(rc, "settings_dropped", "", "provider "+try.endpoint.Name+" does not take "+list+": left out of the call",
		map[string]string{"settings": list, "provider": try.endpoint.Name, "model": try.model})
}

func mustItems(items []json.RawMessage) []byte {
	b, _ := json.Marshal(items)
	return b
}

func (s *Service) diagnostic(rc *runCtx, typ, code, msg string, details map[string]string) {
	s.publish(rc.lr, domain.EventDiagnostic, domain.DiagnosticPayload{RunID: rc.lr.run.ID, Type: typ, Code: code, Message: msg, Details: details})
}

package models

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// modelsTTL is how long a provider's model list is reused: the agent form
// asks on every open, the vendor's list changes rarely.
const modelsTTL = time.Minute

// modelCache keeps each provider's last model list, keyed by the
// provider's version so an edit (a new key, another base URL) asks again.
type modelCache struct {
	mu   sync.Mutex
	byID map[string]cachedModels
}

type cachedModels struct {
	version time.Time
	at      time.Time
	models  []ports.ModelInfo
}

// probeEndpoint resolves a provider the caller can see to its endpoint.
// Returns not_found, or validation when it cannot be called.
func (s *Service) probeEndpoint(ctx context.Context, p domain.Principal, providerID string) (domain.Provider, ports.ProviderEndpoint, error) {
	pr, err := s.d.Providers.Get(ctx, p, providerID)
	if err != nil {
		return pr, ports.ProviderEndpoint{}, err
	}
	ep, err := s.requestEndpoint(ctx, pr.ID, pr.Name)
	return pr, ep, err
}

// ProviderModels lists the models a provider the caller can see offers,
// from the vendor's models endpoint, reused for modelsTTL. Returns
// not_found, validation (the provider cannot be called) or unavailable
// with the vendor's error.
func (s *Service) ProviderModels(ctx context.Context, p domain.Principal, providerID string) ([]ports.ModelInfo, error) {
	pr, ep, err := s.probeEndpoint(ctx, p, providerID)
	if err != nil {
		return nil, err
	}
	now := s.d.Clock.Now()
	s.models.mu.Lock()
	c, ok := s.models.byID[pr.ID]
	s.models.mu.Unlock()
	if ok && c.version.Equal(pr.UpdatedAt) && now.Sub(c.at) < modelsTTL {
		return c.models, nil
	}
	models, err := s.d.LLM.Models(ctx, ep)
	if err != nil {
		msg, _ := vendorError(err)
		var refused *domain.OutboundRefusal
		if errors.As(err, &refused) {
			// The provider's configuration is at fault, not the vendor.
			return nil, errs.Wrap(errs.Validation, err, "%s", msg)
		}
		return nil, errs.Wrap(errs.Unavailable, err, "%s", msg)
	}
	s.models.mu.Lock()
	if s.models.byID == nil {
		s.models.byID = map[string]cachedModels{}
	}
	s.models.byID[pr.ID] = cachedModels{version: pr.UpdatedAt, at: now, models: models}
	s.models.mu.Unlock()
	return models, nil
}

// ProviderTest is how a provider answered one tiny call.
type ProviderTest struct {
	OK      bool
	Latency time.Duration
	Models  int    // how many models it listed
	Error   string // the vendor's error, when not OK
	Kind    string // its class (auth, unavailable, …)
}

// TestProvider makes one tiny call to a provider the caller can see — its
// model list, uncached — and reports the latency or the vendor's error.
// Returns not_found or validation (the provider cannot be called).
func (s *Service) TestProvider(ctx context.Context, p domain.Principal, providerID string) (ProviderTest, error) {
	_, ep, err := s.probeEndpoint(ctx, p, providerID)
	if err != nil {
		return ProviderTest{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start := time.Now()
	models, err := s.d.LLM.Models(ctx, ep)
	t := ProviderTest{Latency: time.Since(start), Models: len(models), OK: err == nil}
	if err != nil {
		t.Error, t.Kind = vendorError(err)
	}
	return t, nil
}

// vendorError is what a failed vendor call says, with its class: a model
// error names the provider and carries the vendor's words, which the
// generic message of an uncoded error would hide.
func vendorError(err error) (msg, kind string) {
	var me *ports.ModelError
	if errors.As(err, &me) {
		return me.Error(), string(me.Kind)
	}
	return errs.MessageOf(err), ""
}

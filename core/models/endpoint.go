package models

import (
	"context"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// ConfigError is a call that cannot be made because of configuration (no
// provider, one that is gone, a ChatGPT sign-in missing): a run ends with
// code config_error and its message, a person's request is refused with it.
type ConfigError = domain.ConfigError

var configErr = domain.ConfigErr

// Endpoint resolves a provider to a call endpoint: its protocol, address,
// opened key and the proxy setting. agentName names what the provider is
// for in a *ConfigError.
func (s *Service) Endpoint(ctx context.Context, providerID, agentName string) (ports.ProviderEndpoint, error) {
	if providerID == "" {
		return ports.ProviderEndpoint{}, configErr("agent %q names no provider: pick one in its settings", agentName)
	}
	pr, err := s.d.Config.FindProvider(ctx, providerID)
	if errs.Is(err, errs.NotFound) {
		return ports.ProviderEndpoint{}, configErr("agent %q names a provider that no longer exists", agentName)
	}
	if err != nil {
		return ports.ProviderEndpoint{}, err
	}
	proxy, err := s.d.Settings.String(ctx, settings.KeyProxyURL)
	if err != nil {
		return ports.ProviderEndpoint{}, err
	}
	if pr.AuthMode == domain.AuthChatGPTLogin { // core/providers' rules
		ep, err := providers.ChatGPTEndpoint(pr, proxy)
		if err != nil {
			return ports.ProviderEndpoint{}, configErr("%s", errs.MessageOf(err))
		}
		return ep, nil
	}
	key, err := s.d.Providers.KeyOf(pr)
	if err != nil {
		return ports.ProviderEndpoint{}, err
	}
	var policy domain.OutboundPolicy
	if s.d.Outbound != nil {
		if policy, err = s.d.Outbound.For(ctx, pr.OwnerID); err != nil {
			return ports.ProviderEndpoint{}, err
		}
	}
	return ports.ProviderEndpoint{ProviderID: pr.ID, AuthMode: pr.AuthMode, Name: pr.Name, Type: pr.Type, API: pr.API, BaseURL: pr.BaseURL,
		APIKey: key, ProxyURL: proxy, Outbound: policy}, nil
}

// requestEndpoint is Endpoint for a person's request rather than a run:
// what a run would fail with as config_error is the request's validation
// error.
func (s *Service) requestEndpoint(ctx context.Context, providerID, name string) (ports.ProviderEndpoint, error) {
	ep, err := s.Endpoint(ctx, providerID, name)
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ep, errs.E(errs.Validation, "%s", ce.Msg)
	}
	return ep, err
}

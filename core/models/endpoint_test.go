package models_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestEndpointResolvesAProviderOrNamesTheConfigFault(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.settings.Put(ctx, f.admin, settings.KeyProxyURL, "http://proxy.example:3128"); err != nil {
		t.Fatal(err)
	}
	ep := f.endpoint(t)
	// The key opened, the proxy setting and the owner's outbound policy.
	want := ports.ProviderEndpoint{ProviderID: f.provider.ID, AuthMode: domain.AuthAPIKey, Name: "p", Type: "openai", API: f.provider.API,
		BaseURL: f.provider.BaseURL, APIKey: "sk-p", ProxyURL: "http://proxy.example:3128", Outbound: domain.OutboundPolicy{Open: true}}
	if ep.ProviderID != want.ProviderID || ep.AuthMode != want.AuthMode || ep.Name != want.Name || ep.Type != want.Type ||
		ep.APIKey != want.APIKey || ep.ProxyURL != want.ProxyURL || !ep.Outbound.Open {
		t.Fatalf("endpoint = %+v, want %+v", ep, want)
	}
	if got := models.ProviderType(ep); got != "openai" {
		t.Fatalf("provider type = %q", got)
	}

	signedOut := f.insertProvider(t, domain.Provider{Name: "gpt", Type: "openai", AuthMode: domain.AuthChatGPTLogin, API: "responses"})
	signedIn := f.insertProvider(t, domain.Provider{Name: "gpt2", Type: "openai", AuthMode: domain.AuthChatGPTLogin, API: "responses"})
	// A sign-in is stored the way the ChatGPT flow stores it.
	if ok, err := (&porttest.ChatGPTStore{Config: f.config}).SwapChatGPTToken(ctx, signedIn.ID, "", "sealed"); !ok || err != nil {
		t.Fatalf("sign in: %v, %v", ok, err)
	}
	ep, err := f.svc.Endpoint(ctx, signedIn.ID, "a")
	if err != nil || ep.ProviderID != signedIn.ID || ep.APIKey != "" || ep.ProxyURL != "http://proxy.example:3128" ||
		models.ProviderType(ep) != "chatgpt" {
		t.Fatalf("signed-in chatgpt endpoint = %+v, %v", ep, err)
	}

	for _, c := range []struct {
		name, providerID, want string
	}{
		{"no provider", "", `agent "a" names no provider`},
		{"a provider gone", "gone", `agent "a" names a provider that no longer exists`},
		{"a chatgpt_login provider not signed in", signedOut.ID, `provider "gpt" signs in with a ChatGPT account and is not signed in`},
	} {
		_, err := f.svc.Endpoint(ctx, c.providerID, "a")
		var ce *models.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Error(), c.want) {
			t.Errorf("%s: %v, want a config error saying %q", c.name, err, c.want)
		}
	}
}

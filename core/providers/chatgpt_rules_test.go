package providers_test

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/providers"
)

// A run reaches a chatgpt_login provider only once it is signed in, and
// then without a key: the bridge fetches the sign-in's token per call.
func TestChatGPTEndpointNeedsASignInAndCarriesNoKey(t *testing.T) {
	pr := domain.Provider{ID: "p1", Name: "Plus", Type: "openai", AuthMode: domain.AuthChatGPTLogin, API: "responses",
		SealedAPIKey: "sealed-key"}
	_, err := providers.ChatGPTEndpoint(pr, "http://proxy:1")
	if errs.CodeOf(err) != errs.Validation || errs.MessageOf(err) != errs.MessageOf(providers.NotSignedIn(pr)) {
		t.Fatalf("not signed in: err = %v", err)
	}
	pr.SealedChatGPTToken = "sealed-token"
	ep, err := providers.ChatGPTEndpoint(pr, "http://proxy:1")
	if err != nil {
		t.Fatal(err)
	}
	if ep.APIKey != "" || ep.BaseURL != "" || ep.ProviderID != "p1" || ep.AuthMode != domain.AuthChatGPTLogin ||
		ep.API != "responses" || ep.ProxyURL != "http://proxy:1" {
		t.Fatalf("endpoint = %+v", ep)
	}
}

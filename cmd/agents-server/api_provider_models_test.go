package main

import (
	"maps"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

func TestProviderModelsAndTestConnectionOnEveryProtocol(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	model.SetScript("scripted-pro", scripted.Script{})
	tok := h.member("prober")
	for protocol, body := range protocols(url) {
		t.Run(protocol, func(t *testing.T) {
			p := h.createProvider(tok, body)
			var list httpapi.ProviderModelsView
			h.call("GET", "/api/v1/providers/"+p.ID+"/models", tok, nil).want(t, 200).decode(t, &list)
			ids := map[string]bool{}
			for _, m := range list.Models {
				ids[m.ID] = true
			}
			if !ids["echo"] || !ids["scripted-pro"] {
				t.Fatalf("models = %+v", list)
			}
			var test httpapi.ProviderTestView
			h.call("POST", "/api/v1/providers/"+p.ID+"/test", tok, nil).want(t, 200).decode(t, &test)
			if !test.OK || test.Models != len(list.Models) || test.Error != "" || test.LatencyMS < 0 {
				t.Fatalf("test = %+v", test)
			}
		})
	}
	// A wrong key is the vendor's refusal, said plainly.
	guarded := httptest.NewServer(scripted.New(scripted.Options{APIKey: "sk-right"}).Handler())
	t.Cleanup(guarded.Close)
	bad := maps.Clone(protocols(guarded.URL)["openai-chat"])
	bad["name"], bad["api_key"] = "wrong-key", "sk-wrong"
	p := h.createProvider(tok, bad)
	var test httpapi.ProviderTestView
	h.call("POST", "/api/v1/providers/"+p.ID+"/test", tok, nil).want(t, 200).decode(t, &test)
	if test.OK || test.Kind != "auth" || test.Error == "" {
		t.Fatalf("wrong key = %+v", test)
	}
	// An unreachable URL: the test says so, the list is a 503.
	down := h.createProvider(tok, map[string]any{"name": "down", "type": "openai", "api": "chat_completions",
		"base_url": "http://127.0.0.1:1/v1", "api_key": "k"})
	h.call("POST", "/api/v1/providers/"+down.ID+"/test", tok, nil).want(t, 200).decode(t, &test)
	if test.OK || test.Kind != "unavailable" || test.Error == "" {
		t.Fatalf("unreachable = %+v", test)
	}
	if e := h.call("GET", "/api/v1/providers/"+down.ID+"/models", tok, nil).wantErr(t, 503, "unavailable"); !strings.Contains(e.Message, "provider down") ||
		strings.Contains(e.Message, "internal server error") {
		t.Fatalf("the list's refusal hides the vendor's error: %q", e.Message)
	}
	// Someone else's private provider reads as absent.
	h.call("GET", "/api/v1/providers/"+down.ID+"/models", h.member("nosy"), nil).wantErr(t, 404, "not_found")
	h.call("POST", "/api/v1/providers/"+down.ID+"/test", h.member("nosy2"), nil).wantErr(t, 404, "not_found")
}

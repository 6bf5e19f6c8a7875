package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// createProvider adds a provider as token and returns it.
func (h *harness) createProvider(token string, body map[string]any) httpapi.ProviderView {
	h.t.Helper()
	var p httpapi.ProviderView
	h.call("POST", "/api/v1/providers", token, body).want(h.t, 201).decode(h.t, &p)
	return p
}

func TestProviderCRUDAndDefaults(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	official := h.createProvider(h.admin, map[string]any{"name": "OpenAI", "api_key": "sk-one"})
	if official.Type != "openai" || official.AuthMode != "api_key" || official.API != "responses" ||
		official.APIKey != secrets.Mask || official.Scope != "private" || official.BaseURL != "" {
		t.Fatalf("defaults = %+v", official)
	}
	local := h.createProvider(h.admin, map[string]any{"name": "Ollama", "base_url": "http://127.0.0.1:11434/v1/"})
	if local.API != "chat_completions" || local.BaseURL != "http://127.0.0.1:11434/v1" || local.APIKey != "" {
		t.Fatalf("self-hosted defaults = %+v", local)
	}
	claude := h.createProvider(h.admin, map[string]any{"name": "Claude", "type": "anthropic", "api_key": "sk-ant"})
	if claude.API != "messages" {
		t.Fatalf("anthropic api = %q", claude.API)
	}

	var list []httpapi.ProviderView
	h.call("GET", "/api/v1/providers", h.admin, nil).want(t, 200).decode(t, &list)
	if len(list) != 3 || list[0].ID != claude.ID {
		t.Fatalf("list = %+v", list)
	}
	var got httpapi.ProviderView
	h.call("GET", "/api/v1/providers/"+official.ID, h.admin, nil).want(t, 200).decode(t, &got)
	if got.Name != "OpenAI" || got.APIKey != secrets.Mask {
		t.Fatalf("get = %+v", got)
	}

	// PUT is a full replace: what is omitted takes its default.
	var upd httpapi.ProviderView
	h.call("PUT", "/api/v1/providers/"+local.ID, h.admin, map[string]any{"name": "Ollama 2", "base_url": "http://127.0.0.1:11434/v1", "api": "responses"}).
		want(t, 200).decode(t, &upd)
	if upd.Name != "Ollama 2" || upd.API != "responses" || upd.ID != local.ID || !upd.UpdatedAt.After(local.CreatedAt) && !upd.UpdatedAt.Equal(local.CreatedAt) {
		t.Fatalf("update = %+v", upd)
	}
	h.call("DELETE", "/api/v1/providers/"+local.ID, h.admin, nil).want(t, 204)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		h.call(m, "/api/v1/providers/"+local.ID, h.admin, map[string]any{"name": "x"}).wantErr(t, 404, "not_found")
	}

	var types []httpapi.ProviderTypeView
	h.call("GET", "/api/v1/provider-types", h.admin, nil).want(t, 200).decode(t, &types)
	if len(types) != 2 || types[0].Type != "openai" || len(types[0].APIs) != 2 || types[1].Type != "anthropic" ||
		!strings.Contains(strings.Join(types[1].Unsupported, ","), "stored_prompts") {
		t.Fatalf("provider types = %+v", types)
	}
}

func TestProviderValidationNamesTheField(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	cases := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "x", "type": "gemini"}, "type"},
		{map[string]any{"name": "x", "type": "anthropic", "auth_mode": "chatgpt_login"}, "auth_mode"},
		{map[string]any{"name": "x", "auth_mode": "password"}, "auth_mode"},
		{map[string]any{"name": "x", "api": "messages"}, "api"},
		{map[string]any{"name": "x", "base_url": "ftp://host"}, "base_url"},
		{map[string]any{"name": "x", "base_url": "https://user:pw@host/v1"}, "base_url"},
		{map[string]any{"name": "x", "auth_mode": "chatgpt_login", "api_key": "sk"}, "api_key"},
		{map[string]any{"name": "x", "auth_mode": "chatgpt_login", "api": "chat_completions"}, "api"},
	}
	for _, c := range cases {
		d := h.call("POST", "/api/v1/providers", h.admin, c.body).wantErr(t, 400, "validation")
		if d.Fields[c.field] == "" {
			t.Errorf("%v: error not on %s: %+v", c.body, c.field, d)
		}
	}
	h.call("POST", "/api/v1/providers", h.admin, map[string]any{"name": "x", "colour": "red"}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/providers", h.admin, map[string]any{"name": "dup"}).want(t, 201)
	h.call("POST", "/api/v1/providers", h.admin, map[string]any{"name": "DUP"}).wantErr(t, 409, "conflict")
	var list []httpapi.ProviderView
	h.call("GET", "/api/v1/providers", h.admin, nil).want(t, 200).decode(t, &list)
	if len(list) != 1 {
		t.Fatalf("refused creates left rows: %+v", list)
	}
}

func TestProviderKeyMaskRules(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	ctx := context.Background()
	p := h.createProvider(h.admin, map[string]any{"name": "p", "api_key": "sk-original"})
	key := func() string {
		k, err := workbenchparts.Of(h.app.wb).Providers.APIKey(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	put := func(body map[string]any) reply { return h.call("PUT", "/api/v1/providers/"+p.ID, h.admin, body) }

	// Sending back what was read keeps the key.
	var read httpapi.ProviderView
	h.call("GET", "/api/v1/providers/"+p.ID, h.admin, nil).want(t, 200).decode(t, &read)
	read.Name = "renamed"
	put(map[string]any{"name": read.Name, "type": read.Type, "auth_mode": read.AuthMode, "api": read.API,
		"base_url": read.BaseURL, "api_key": read.APIKey, "id": read.ID, "scope": read.Scope, "owner_id": read.OwnerID,
		"created_at": read.CreatedAt, "updated_at": read.UpdatedAt, "chatgpt_logged_in": false}).want(t, 200)
	if key() != "sk-original" {
		t.Fatalf("the mask did not keep the key: %q", key())
	}
	// The mask never follows the key to another endpoint.
	d := put(map[string]any{"name": "p", "api_key": secrets.Mask, "base_url": "https://evil.example/v1"}).wantErr(t, 400, "validation")
	if d.Fields["api_key"] == "" {
		t.Fatalf("base_url change with mask: %+v", d)
	}
	d = put(map[string]any{"name": "p", "api_key": secrets.Mask, "type": "anthropic"}).wantErr(t, 400, "validation")
	if d.Fields["api_key"] == "" {
		t.Fatalf("type change with mask: %+v", d)
	}
	if key() != "sk-original" {
		t.Fatal("a refused update changed the key")
	}
	// A new value replaces; "" clears.
	var v httpapi.ProviderView
	put(map[string]any{"name": "p", "api_key": "sk-new"}).want(t, 200).decode(t, &v)
	if key() != "sk-new" || v.APIKey != secrets.Mask {
		t.Fatalf("replace: %q %+v", key(), v)
	}
	put(map[string]any{"name": "p", "api_key": ""}).want(t, 200).decode(t, &v)
	if key() != "" || v.APIKey != "" {
		t.Fatalf("clear: %q %+v", key(), v)
	}
	// With no key stored, the mask with a new endpoint is harmless.
	put(map[string]any{"name": "p", "api_key": secrets.Mask, "base_url": "https://other.example/v1"}).want(t, 200)
}

func TestNoPlaintextKeyInResponsesLogsOrDatabase(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.SecretKey = newKey(t)
	h := startServer(t, cfg)
	const plant = "sk-PLANTED-7d1e9a"
	member := h.member("kim")
	p := h.createProvider(member, map[string]any{"name": "mine", "api_key": plant})
	bodies := []reply{
		h.call("GET", "/api/v1/providers", member, nil),
		h.call("GET", "/api/v1/providers/"+p.ID, member, nil),
		h.call("PUT", "/api/v1/providers/"+p.ID, member, map[string]any{"name": "mine", "api_key": secrets.Mask}),
		h.call("PUT", "/api/v1/providers/"+p.ID, member, map[string]any{"name": "mine", "api_key": secrets.Mask, "base_url": "https://x.example"}),
		h.call("POST", "/api/v1/providers/"+p.ID+"/scope", member, map[string]any{"scope": "global"}),
	}
	for _, r := range bodies {
		if strings.Contains(string(r.Body), plant) {
			t.Fatalf("a response carries the key: %s", r.Body)
		}
	}
	if k, _ := workbenchparts.Of(h.app.wb).Providers.APIKey(context.Background(), p.ID); k != plant {
		t.Fatalf("the key did not survive: %q", k)
	}
	if strings.Contains(h.logs.String(), plant) {
		t.Fatal("the log carries the key")
	}
	if hits := filesContain(t, cfg.DataDir, plant); len(hits) > 0 {
		t.Fatalf("plaintext key in %v", hits)
	}
	h.stop()
	if hits := filesContain(t, cfg.DataDir, plant); len(hits) > 0 {
		t.Fatalf("plaintext key in %v after close", hits)
	}
}

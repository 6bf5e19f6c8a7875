package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/anthropic"
	"github.com/agents-server/agents-server/adapters/llm/internal/llmtest"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The adapter is tested as it runs: the official SDK talking HTTP to the
// scripted model server's Messages endpoint. What every model adapter
// promises is llmtest.Contract; the tests below are this vendor's wire
// specifics.

func endpoint(url string) ports.ProviderEndpoint {
	return ports.ProviderEndpoint{Name: "test-anthropic", Type: "anthropic", API: "messages", BaseURL: url, APIKey: "sk-ant-test", Outbound: domain.OpenOutbound}
}

func TestContract(t *testing.T) {
	llmtest.Contract(t, llmtest.Harness{
		Format:   scripted.APIMessages,
		New:      func() ports.LLM { return anthropic.New(anthropic.Options{}) },
		Endpoint: endpoint,
	})
}

type fixture struct {
	srv *scripted.Server
	url string
}

func start(t *testing.T, opts scripted.Options) fixture {
	t.Helper()
	srv := scripted.New(opts)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return fixture{srv: srv, url: hs.URL}
}

func (f fixture) request(model string, input ...json.RawMessage) ports.ModelRequest {
	return ports.ModelRequest{Endpoint: endpoint(f.url), Model: model, Input: input}
}

func (f fixture) script(model string, steps ...scripted.Step) {
	f.srv.SetScript(model, scripted.Script{Exchanges: []scripted.Exchange{{Steps: steps}}})
}

func generate(t *testing.T, req ports.ModelRequest) ports.ModelResponse {
	t.Helper()
	resp, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestThinking: a reasoning effort turns thinking on with a budget that is
// a share of max_tokens, and the thinking block comes back as a reasoning
// item that carries its signature (in encrypted_content) and an id marking
// it as Anthropic's own.
func TestThinking(t *testing.T) {
	f := start(t, scripted.Options{})
	f.script("claude", scripted.Step{Reasoning: "Weighing the options carefully.", Text: "Done."})
	req := f.request("claude", llmtest.User("decide"))
	req.Settings.ReasoningEffort = "medium"
	resp := generate(t, req)
	r := domain.ParseItem(resp.Output[0])
	if r.Kind() != "reasoning" || r.EncryptedContent == "" || !strings.HasPrefix(r.ID, "thinking_") {
		t.Fatalf("reasoning item %s", resp.Output[0])
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Thinking  struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
	}
	_ = json.Unmarshal(f.srv.Requests()[0].Body, &body)
	if body.MaxTokens != 8192 || body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != 4096 {
		t.Fatalf("thinking request %+v", body)
	}
}

// TestToolLoopOnTheWire runs a tool turn (thinking, text, a call) and sends
// it back with the output, checking the Messages shape of the second
// request: the system prompt, one assistant turn of signed thinking, text
// and tool_use blocks, a user turn of tool_result, and tool schemas with
// their extra keywords.
func TestToolLoopOnTheWire(t *testing.T) {
	f := start(t, scripted.Options{})
	args := `{"path":"README.md","limit":10}`
	f.script("claude",
		scripted.Step{Reasoning: "Need the file.", Text: "Reading it.",
			ToolCalls: []scripted.ToolCall{{Name: "read_file", Arguments: args, CallID: "toolu_1"}}},
		scripted.Step{Text: "The README says hello."})
	req := f.request("claude", llmtest.User("what does the readme say?"))
	req.Instructions = "Be brief."
	req.Settings.ReasoningEffort = "low"
	req.Tools = []ports.ToolDef{{Name: "read_file", Description: "Read a file",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}}
	first := generate(t, req)
	req.Input = append(append(req.Input, first.Output...), domain.FunctionCallOutput("toolu_1", "hello"))
	generate(t, req)

	var body struct {
		System   []map[string]any `json:"system"`
		Thinking map[string]any   `json:"thinking"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(f.srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 1 || body.System[0]["text"] != "Be brief." || len(body.Messages) != 3 {
		t.Fatalf("request %s", f.srv.Requests()[1].Body)
	}
	assistant, results := body.Messages[1], body.Messages[2]
	types := []string{}
	for _, b := range assistant.Content {
		types = append(types, b["type"].(string))
	}
	if assistant.Role != "assistant" || strings.Join(types, ",") != "thinking,text,tool_use" ||
		assistant.Content[0]["signature"] == "" || assistant.Content[2]["input"].(map[string]any)["path"] != "README.md" {
		t.Fatalf("assistant turn %+v", assistant)
	}
	if results.Role != "user" || results.Content[0]["type"] != "tool_result" || results.Content[0]["tool_use_id"] != "toolu_1" {
		t.Fatalf("tool results turn %+v", results)
	}
	schema := body.Tools[0]["input_schema"].(map[string]any)
	if schema["type"] != "object" || schema["additionalProperties"] != false || body.Thinking["type"] != "enabled" {
		t.Fatalf("tool schema %v thinking %v", schema, body.Thinking)
	}
}

// A provider's request carries only what its row says: the operator's
// ANTHROPIC_* variables, which the SDK's default client reads, never reach
// a provider.
func TestRequestsCarryNothingFromTheServersEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: leaked")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
	f := start(t, scripted.Options{})
	if _, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), f.request("echo", llmtest.User("hi")), nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached the provider, want 1", len(reqs))
	}
	h := reqs[0].Header
	if v := h.Get("X-From-Env"); v != "" {
		t.Errorf("the request carried X-From-Env: %q from the server's environment", v)
	}
	if v := h.Get("Authorization"); v != "" {
		t.Errorf("the request carried Authorization %q from the server's environment", v)
	}
	if got := h.Get("X-Api-Key"); got != "sk-ant-test" {
		t.Errorf("X-Api-Key = %q, want the provider's own key", got)
	}
}

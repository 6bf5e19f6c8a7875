package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
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
// scripted model server's Messages endpoint.

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
	return ports.ModelRequest{
		Endpoint: ports.ProviderEndpoint{Name: "test-anthropic", Type: "anthropic", API: "messages", BaseURL: f.url, APIKey: "sk-ant-test"},
		Model:    model,
		Input:    input,
	}
}

func (f fixture) script(model string, steps ...scripted.Step) {
	f.srv.SetScript(model, scripted.Script{Exchanges: []scripted.Exchange{{Steps: steps}}})
}

func generate(t *testing.T, req ports.ModelRequest, sink func(ports.ModelDelta)) ports.ModelResponse {
	t.Helper()
	resp, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), req, sink)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestStreamedTextAndUsage(t *testing.T) {
	f := start(t, scripted.Options{})
	text := "Hello from the Messages stream, in order."
	f.script("claude", scripted.Step{Text: text, ChunkSize: 4, Usage: &scripted.Usage{InputTokens: 80, OutputTokens: 11, CachedTokens: 30}})
	var c llmtest.Collector
	resp := generate(t, f.request("claude", llmtest.User("hi")), c.Sink)
	got, n := c.Joined(ports.DeltaText)
	if got != text || n != (len(text)+3)/4 {
		t.Fatalf("deltas %q in %d pieces", got, n)
	}
	if len(resp.Output) != 1 || llmtest.MessageText(t, resp.Output[0]) != text {
		t.Fatalf("output %s", resp.Output)
	}
	want := domain.Usage{InputTokens: 80, OutputTokens: 11, CachedTokens: 30, TotalTokens: 91}
	if resp.Usage != want {
		t.Fatalf("usage %+v, want %+v", resp.Usage, want)
	}
	if resp.Model != "claude" || !strings.HasPrefix(resp.ResponseID, "msg_") {
		t.Fatalf("model %q id %q", resp.Model, resp.ResponseID)
	}
}

func TestThinkingDeltasAndReasoningItem(t *testing.T) {
	f := start(t, scripted.Options{})
	f.script("claude", scripted.Step{Reasoning: "Weighing the options carefully.", Text: "Done."})
	var c llmtest.Collector
	req := f.request("claude", llmtest.User("decide"))
	req.Settings.ReasoningEffort = "medium"
	resp := generate(t, req, c.Sink)
	if got, _ := c.Joined(ports.DeltaReasoning); got != "Weighing the options carefully." {
		t.Fatalf("thinking deltas %q", got)
	}
	if len(resp.Output) != 2 {
		t.Fatalf("output %s", resp.Output)
	}
	r := llmtest.Decode(t, resp.Output[0])
	if r["type"] != "reasoning" || r["encrypted_content"] == "" ||
		r["summary"].([]any)[0].(map[string]any)["text"] != "Weighing the options carefully." {
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

// TestToolRoundTrip runs step 0 (thinking, text, a tool call), sends the
// items and the tool output back, and gets step 1: the server answers step 1
// only when it reads one assistant turn after the user's text, so this also
// proves the input translation (tool_use, tool_result, signed thinking).
func TestToolRoundTrip(t *testing.T) {
	f := start(t, scripted.Options{})
	args := `{"path":"README.md","limit":10}`
	f.script("claude",
		scripted.Step{Reasoning: "Need the file.", Text: "Reading it.", ChunkSize: 5,
			ToolCalls: []scripted.ToolCall{{Name: "read_file", Arguments: args, CallID: "toolu_1"}}},
		scripted.Step{Text: "The README says hello."})
	req := f.request("claude", llmtest.User("what does the readme say?"))
	req.Instructions = "Be brief."
	req.Settings.ReasoningEffort = "low"
	req.Tools = []ports.ToolDef{{Name: "read_file", Description: "Read a file",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}}
	var c llmtest.Collector
	first := generate(t, req, c.Sink)
	if got, _ := c.Joined(ports.DeltaArguments); got != args {
		t.Fatalf("argument deltas %q", got)
	}
	for _, d := range c.Deltas {
		if d.Kind == ports.DeltaArguments && (d.CallID != "toolu_1" || d.Name != "read_file") {
			t.Fatalf("arguments delta without its call: %+v", d)
		}
	}
	if len(first.Output) != 3 || llmtest.MessageText(t, first.Output[1]) != "Reading it." {
		t.Fatalf("output %s", first.Output)
	}
	call := llmtest.Decode(t, first.Output[2])
	if call["type"] != "function_call" || call["call_id"] != "toolu_1" || call["name"] != "read_file" || call["arguments"] != args {
		t.Fatalf("function call %s", first.Output[2])
	}
	out, _ := json.Marshal(map[string]any{"type": "function_call_output", "call_id": "toolu_1", "output": "hello"})
	req.Input = append(append(req.Input, first.Output...), out)
	second := generate(t, req, nil)
	if len(second.Output) != 1 || llmtest.MessageText(t, second.Output[0]) != "The README says hello." {
		t.Fatalf("second output %s", second.Output)
	}

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

func TestErrorClasses(t *testing.T) {
	cases := []struct {
		name   string
		fail   scripted.Failure
		kind   ports.ModelErrorKind
		status int
	}{
		{"rate limited", scripted.Failure{Status: 429}, ports.ModelRateLimited, 429},
		{"server error", scripted.Failure{Status: 500}, ports.ModelUnavailable, 500},
		{"overloaded", scripted.Failure{Status: 529}, ports.ModelUnavailable, 529},
		{"overflow", scripted.Failure{Overflow: true}, ports.ModelOverflow, 400},
		{"invalid", scripted.Failure{Status: 400, Message: "messages: field required"}, ports.ModelInvalid, 400},
		{"forbidden", scripted.Failure{Status: 403}, ports.ModelAuth, 403},
	}
	f := start(t, scripted.Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.script(tc.name, scripted.Step{Error: &tc.fail})
			_, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), f.request(tc.name, llmtest.User("x")), nil)
			me := llmtest.ModelError(t, "test-anthropic", err, tc.kind, tc.status)
			if tc.name == "overflow" && !strings.Contains(me.Message, "prompt is too long") {
				t.Fatalf("overflow message %q", me.Message)
			}
		})
	}
}

func TestAuthFailure(t *testing.T) {
	f := start(t, scripted.Options{APIKey: "sk-ant-right"})
	req := f.request("echo", llmtest.User("hi"))
	req.Endpoint.APIKey = "sk-ant-wrong"
	_, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), req, nil)
	llmtest.ModelError(t, "test-anthropic", err, ports.ModelAuth, 401)
	req.Endpoint.APIKey = "sk-ant-right"
	if resp := generate(t, req, nil); llmtest.MessageText(t, resp.Output[0]) != "You said: hi" {
		t.Fatalf("with the right key: %s", resp.Output)
	}
}

func TestFailTimesThenSuccess(t *testing.T) {
	f := start(t, scripted.Options{})
	f.script("claude", scripted.Step{Text: "finally", FailTimes: 2, Error: &scripted.Failure{Status: 529}})
	llm := anthropic.New(anthropic.Options{})
	for range 2 {
		_, err := llm.Generate(context.Background(), f.request("claude", llmtest.User("x")), nil)
		if me := llmtest.ModelError(t, "test-anthropic", err, ports.ModelUnavailable, 529); !me.Retryable() {
			t.Fatal("overloaded is not retryable")
		}
	}
	if resp := generate(t, f.request("claude", llmtest.User("x")), nil); llmtest.MessageText(t, resp.Output[0]) != "finally" {
		t.Fatalf("third attempt %s", resp.Output)
	}
}

func TestCancelMidStream(t *testing.T) {
	f := start(t, scripted.Options{})
	f.script("claude", scripted.Step{Text: strings.Repeat("slow text ", 50), ChunkSize: 1, DelayMS: 5})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := anthropic.New(anthropic.Options{}).Generate(ctx, f.request("claude", llmtest.User("x")), func(ports.ModelDelta) {
		if n++; n == 3 {
			cancel()
		}
	})
	llmtest.Cancelled(t, err)
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	req := ports.ModelRequest{Endpoint: ports.ProviderEndpoint{Name: "test-anthropic", BaseURL: url}, Model: "m", Input: []json.RawMessage{llmtest.User("x")}}
	_, err := anthropic.New(anthropic.Options{}).Generate(context.Background(), req, nil)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelUnavailable || me.Status != 0 {
		t.Fatalf("%v", err)
	}
}

// TestForeignReasoningIsDropped: a reasoning item from another provider (no
// Anthropic signature) must not reach Messages as a thinking block.
func TestForeignReasoningIsDropped(t *testing.T) {
	f := start(t, scripted.Options{})
	foreign, _ := json.Marshal(map[string]any{"type": "reasoning", "id": "rs_openai", "encrypted_content": "gAAAA",
		"summary": []any{map[string]any{"type": "summary_text", "text": "openai thoughts"}}})
	answer, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "earlier"}}})
	generate(t, f.request("echo", llmtest.User("one"), foreign, answer, llmtest.User("two")), nil)
	if body := string(f.srv.Requests()[0].Body); strings.Contains(body, "thinking") || !strings.Contains(body, "earlier") {
		t.Fatalf("request %s", body)
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

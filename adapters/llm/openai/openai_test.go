package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/internal/llmtest"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The adapter is tested as it runs: the official SDK talking HTTP to the
// scripted model server, for both APIs.

var apis = []string{"responses", "chat_completions"}

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

func (f fixture) request(api, model string, input ...json.RawMessage) ports.ModelRequest {
	return ports.ModelRequest{
		Endpoint: ports.ProviderEndpoint{Name: "test-openai", Type: "openai", API: api, BaseURL: f.url + "/v1", APIKey: "sk-test"},
		Model:    model,
		Input:    input,
	}
}

func TestStreamedTextAndUsage(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			text := "Hello, streaming world! Deltas arrive in order."
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
				Text: text, ChunkSize: 5, Usage: &scripted.Usage{InputTokens: 100, OutputTokens: 12, CachedTokens: 40},
			}}}}})
			var c llmtest.Collector
			resp, err := openai.New(openai.Options{}).Generate(context.Background(), f.request(api, "m", llmtest.User("hi")), c.Sink)
			if err != nil {
				t.Fatal(err)
			}
			got, n := c.Joined(ports.DeltaText)
			if got != text || n != (len(text)+4)/5 {
				t.Fatalf("deltas %q in %d pieces, want %q in %d", got, n, text, (len(text)+4)/5)
			}
			if len(resp.Output) != 1 || llmtest.MessageText(t, resp.Output[0]) != text {
				t.Fatalf("output %s", resp.Output)
			}
			want := domain.Usage{InputTokens: 100, OutputTokens: 12, CachedTokens: 40, TotalTokens: 112}
			if resp.Usage != want {
				t.Fatalf("usage %+v, want %+v", resp.Usage, want)
			}
			if resp.Model != "m" || resp.ResponseID == "" {
				t.Fatalf("model %q id %q", resp.Model, resp.ResponseID)
			}
		})
	}
}

func TestReasoningDeltasAndItem(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
				Reasoning: "First I think, then I answer.", Text: "Answer.",
			}}}}})
			var c llmtest.Collector
			resp, err := openai.New(openai.Options{}).Generate(context.Background(), f.request(api, "m", llmtest.User("q")), c.Sink)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := c.Joined(ports.DeltaReasoning); got != "First I think, then I answer." {
				t.Fatalf("reasoning deltas %q", got)
			}
			if len(resp.Output) != 2 {
				t.Fatalf("output %s", resp.Output)
			}
			r := llmtest.Decode(t, resp.Output[0])
			summary := r["summary"].([]any)
			if r["type"] != "reasoning" || summary[0].(map[string]any)["text"] != "First I think, then I answer." {
				t.Fatalf("reasoning item %s", resp.Output[0])
			}
			if api == "responses" && !strings.HasPrefix(r["id"].(string), "rs_") {
				t.Fatalf("reasoning item keeps no OpenAI id: %s", resp.Output[0])
			}
			if llmtest.MessageText(t, resp.Output[1]) != "Answer." {
				t.Fatalf("message %s", resp.Output[1])
			}
		})
	}
}

// TestToolRoundTrip runs step 0 (a tool call), sends the call and its output
// back, and gets step 1: the server only answers step 1 when it reads one
// assistant turn after the user message, so this also proves the input
// translation.
func TestToolRoundTrip(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			args := `{"city":"Paris","unit":"celsius"}`
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{When: "weather", Steps: []scripted.Step{
				{Text: "Let me check.", ToolCalls: []scripted.ToolCall{{Name: "get_weather", Arguments: args}}, ChunkSize: 6},
				{Text: "It is sunny in Paris."},
			}}}})
			llm := openai.New(openai.Options{})
			req := f.request(api, "m", llmtest.User("what is the weather in Paris?"))
			req.Instructions = "You are terse."
			req.Tools = []ports.ToolDef{{Name: "get_weather", Description: "Weather by city",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
			var c llmtest.Collector
			first, err := llm.Generate(context.Background(), req, c.Sink)
			if err != nil {
				t.Fatal(err)
			}
			gotArgs, _ := c.Joined(ports.DeltaArguments)
			if gotArgs != args {
				t.Fatalf("argument deltas %q", gotArgs)
			}
			for _, d := range c.Deltas {
				if d.Kind == ports.DeltaArguments && (d.CallID != "call_0_0_0" || d.Name != "get_weather") {
					t.Fatalf("arguments delta without its call: %+v", d)
				}
			}
			if len(first.Output) != 2 || llmtest.MessageText(t, first.Output[0]) != "Let me check." {
				t.Fatalf("output %s", first.Output)
			}
			call := llmtest.Decode(t, first.Output[1])
			if call["type"] != "function_call" || call["call_id"] != "call_0_0_0" || call["name"] != "get_weather" || call["arguments"] != args {
				t.Fatalf("function call %s", first.Output[1])
			}
			out, _ := json.Marshal(map[string]any{"type": "function_call_output", "call_id": "call_0_0_0", "output": "sunny, 24°C"})
			req.Input = append(append(req.Input, first.Output...), out)
			second, err := llm.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(second.Output) != 1 || llmtest.MessageText(t, second.Output[0]) != "It is sunny in Paris." {
				t.Fatalf("second output %s", second.Output)
			}
		})
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
		{"overloaded", scripted.Failure{Status: 503}, ports.ModelUnavailable, 503},
		{"overflow", scripted.Failure{Overflow: true}, ports.ModelOverflow, 400},
		{"invalid", scripted.Failure{Status: 400, Message: "bad parameter"}, ports.ModelInvalid, 400},
		{"forbidden", scripted.Failure{Status: 403}, ports.ModelAuth, 403},
	}
	for _, api := range apis {
		f := start(t, scripted.Options{})
		for _, tc := range cases {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				f.srv.SetScript(tc.name, scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Error: &tc.fail}}}}})
				_, err := openai.New(openai.Options{}).Generate(context.Background(), f.request(api, tc.name, llmtest.User("x")), nil)
				llmtest.ModelError(t, "test-openai", err, tc.kind, tc.status)
			})
		}
	}
}

func TestAuthFailure(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{APIKey: "sk-right"})
			req := f.request(api, "echo", llmtest.User("hi"))
			req.Endpoint.APIKey = "sk-wrong"
			_, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil)
			llmtest.ModelError(t, "test-openai", err, ports.ModelAuth, 401)
			req.Endpoint.APIKey = "sk-right"
			resp, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil)
			if err != nil || llmtest.MessageText(t, resp.Output[0]) != "You said: hi" {
				t.Fatalf("with the right key: %v %s", err, resp.Output)
			}
		})
	}
}

func TestFailTimesThenSuccess(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
				Text: "finally", FailTimes: 2, Error: &scripted.Failure{Status: 502},
			}}}}})
			llm := openai.New(openai.Options{})
			for i := range 2 {
				_, err := llm.Generate(context.Background(), f.request(api, "m", llmtest.User("x")), nil)
				if me := llmtest.ModelError(t, "test-openai", err, ports.ModelUnavailable, 502); !me.Retryable() {
					t.Fatalf("attempt %d not retryable", i)
				}
			}
			resp, err := llm.Generate(context.Background(), f.request(api, "m", llmtest.User("x")), nil)
			if err != nil || llmtest.MessageText(t, resp.Output[0]) != "finally" {
				t.Fatalf("third attempt: %v %s", err, resp.Output)
			}
		})
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
				Text: strings.Repeat("slow text ", 50), ChunkSize: 1, DelayMS: 5,
			}}}}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			_, err := openai.New(openai.Options{}).Generate(ctx, f.request(api, "m", llmtest.User("x")), func(ports.ModelDelta) {
				if n++; n == 3 {
					cancel()
				}
			})
			llmtest.Cancelled(t, err)
		})
	}
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	for _, api := range apis {
		req := ports.ModelRequest{Endpoint: ports.ProviderEndpoint{Name: "test-openai", API: api, BaseURL: url + "/v1"}, Model: "m", Input: []json.RawMessage{llmtest.User("x")}}
		_, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil)
		var me *ports.ModelError
		if !errors.As(err, &me) || me.Kind != ports.ModelUnavailable || me.Status != 0 {
			t.Fatalf("%s: %v", api, err)
		}
	}
}

// TestProxyURL checks calls go through the endpoint's proxy: the proxy sees
// the absolute URL of every request it forwards.
func TestProxyURL(t *testing.T) {
	f := start(t, scripted.Options{})
	var hits atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		res, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()
	req := f.request("responses", "echo", llmtest.User("via proxy"))
	req.Endpoint.ProxyURL = proxy.URL
	resp, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil)
	if err != nil || llmtest.MessageText(t, resp.Output[0]) != "You said: via proxy" {
		t.Fatalf("%v %s", err, resp.Output)
	}
	if hits.Load() != 1 {
		t.Fatalf("proxy saw %d requests", hits.Load())
	}
	req.Endpoint.ProxyURL = "::not a url"
	_, err = openai.New(openai.Options{}).Generate(context.Background(), req, nil)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelInvalid {
		t.Fatalf("bad proxy: %v", err)
	}
}

// TestSettingsReachTheWire checks each setting lands in the field its API
// names it by.
func TestSettingsReachTheWire(t *testing.T) {
	temp, maxOut, parallel := 0.5, 300, false
	want := map[string][]string{
		"responses": {`"instructions":"Be terse."`, `"max_output_tokens":300`, `"parallel_tool_calls":false`, `"temperature":0.5`,
			`"prompt":{"id":"pmpt_1","version":"2"}`, `"reasoning":{"effort":"low","summary":"auto"}`, `"verbosity":"low"`,
			`"format":{"name":"output","schema":{"additionalProperties":false`, `"strict":true,"type":"json_schema"`,
			`"tool_choice":{"name":"lookup","type":"function"}`, `"name":"lookup","description":"Look up","type":"function"`},
		"chat_completions": {`{"content":"Be terse.","role":"system"}`, `"max_completion_tokens":300`, `"parallel_tool_calls":false`,
			`"temperature":0.5`, `"reasoning_effort":"low"`, `"stream_options":{"include_usage":true}`, `"verbosity":"low"`,
			`"response_format":{"json_schema":{"name":"output","strict":true`, `"tool_choice":{"function":{"name":"lookup"},"type":"function"}`},
	}
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			req := f.request(api, "echo", llmtest.User("hi"))
			req.Instructions = "Be terse."
			req.Tools = []ports.ToolDef{{Name: "lookup", Description: "Look up", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
			req.ToolChoice = "lookup"
			req.Settings = domain.ModelSettings{Temperature: &temp, MaxOutputTokens: &maxOut, ParallelToolCalls: &parallel,
				ReasoningEffort: "low", ReasoningSummary: "auto", Verbosity: "low"}
			req.OutputSchema = json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}`)
			req.PromptID, req.PromptVersion = "pmpt_1", "2"
			if _, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			body := string(f.srv.Requests()[0].Body)
			for _, w := range want[api] {
				if !strings.Contains(body, w) {
					t.Errorf("request lacks %s:\n%s", w, body)
				}
			}
		})
	}
}

// A provider's request carries only what its row says: the operator's
// OPENAI_* variables, which the SDK's default client reads, never reach a
// provider (a third-party base URL included).
func TestRequestsCarryNothingFromTheServersEnvironment(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Env: leaked\nX-Other: leaked")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			if _, err := openai.New(openai.Options{}).Generate(context.Background(), f.request(api, "echo", llmtest.User("hi")), nil); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests reached the provider, want 1", len(reqs))
			}
			h := reqs[0].Header
			for _, name := range []string{"OpenAI-Organization", "OpenAI-Project", "X-From-Env", "X-Other"} {
				if v := h.Get(name); v != "" {
					t.Errorf("the request carried %s: %q from the server's environment", name, v)
				}
			}
			if got := h.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q, want the provider's own key", got)
			}
		})
	}
}

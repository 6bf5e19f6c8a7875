package openai_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/llm/internal/llmtest"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The adapter is tested as it runs: the official SDK talking HTTP to the
// scripted model server, for both APIs. What every model adapter promises
// is llmtest.Contract; the tests below are this vendor's wire specifics.

var apis = []string{scripted.APIResponses, scripted.APIChatCompletions}

func harness(api string) llmtest.Harness {
	h := llmtest.Harness{
		Format: api,
		New:    func() ports.LLM { return openai.New(openai.Options{}) },
		Endpoint: func(url string) ports.ProviderEndpoint {
			return ports.ProviderEndpoint{Name: "test-openai", Type: "openai", API: api, BaseURL: url + "/v1", APIKey: "sk-test", Outbound: domain.OpenOutbound}
		},
	}
	if api == scripted.APIChatCompletions {
		h.Lacks = map[llmtest.Capability]string{llmtest.ReasoningHandedBack: "Chat Completions messages have no field for " +
			"reasoning (compatible servers refuse reasoning_content in input), so the adapter drops reasoning items"}
	}
	return h
}

func TestContract(t *testing.T) {
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			llmtest.Contract(t, harness(api))
		})
	}
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

func (f fixture) request(api, model string, input ...json.RawMessage) ports.ModelRequest {
	return ports.ModelRequest{Endpoint: harness(api).Endpoint(f.url), Model: model, Input: input}
}

// TestItemIDs: Responses items keep OpenAI's ids (rs_, msg_, fc_), which
// the next Responses call sends back as stored items; Chat Completions
// items carry none, since an OpenAI-looking id would make a later
// Responses call send them as stored items too.
func TestItemIDs(t *testing.T) {
	prefixes := map[string][]string{scripted.APIResponses: {"rs_", "msg_", "fc_"}, scripted.APIChatCompletions: {"", "", ""}}
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			f := start(t, scripted.Options{})
			f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
				Reasoning: "Think.", Text: "Call.", ToolCalls: []scripted.ToolCall{{Name: "f"}},
			}}}}})
			resp, err := openai.New(openai.Options{}).Generate(context.Background(), f.request(api, "m", llmtest.User("q")), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Output) != 3 {
				t.Fatalf("output %s", resp.Output)
			}
			for i, want := range prefixes[api] {
				id := domain.ParseItem(resp.Output[i]).ID
				if want == "" && id != "" || !strings.HasPrefix(id, want) {
					t.Errorf("item %s: id %q, want prefix %q", resp.Output[i], id, want)
				}
			}
		})
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

// A streamed answer's deltas are read, not decoded whole: the SDK's event
// type is a union of every event's fields its reflective decoder fills in
// full for each one. Allocations count the work (the scripted server's
// share included, the same for both answers): the cost of a delta, the
// difference between a long answer and a short one per extra delta, was
// ~68 decoding the SDK's type and is ~35 reading the fields.
func TestResponsesDeltasAreReadCheaply(t *testing.T) {
	f := start(t, scripted.Options{})
	const long, short = 600, 6
	f.srv.SetScript("long", oneStep(scripted.Step{Text: strings.Repeat("ab", long), ChunkSize: 2}))
	f.srv.SetScript("short", oneStep(scripted.Step{Text: strings.Repeat("ab", short), ChunkSize: 2}))
	llm := openai.New(openai.Options{})
	allocs := func(model string) float64 {
		return testing.AllocsPerRun(5, func() {
			resp, err := llm.Generate(context.Background(), f.request(scripted.APIResponses, model, llmtest.User("go")), nil)
			if err != nil || len(resp.Output) != 1 {
				t.Fatalf("%v %v", resp, err)
			}
		})
	}
	perDelta := (allocs("long") - allocs("short")) / (long - short)
	t.Logf("%.1f allocations per delta", perDelta)
	if perDelta > 50 {
		t.Errorf("a delta costs %.1f allocations, want at most 50", perDelta)
	}
}

func oneStep(st scripted.Step) scripted.Script {
	return scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{st}}}}
}

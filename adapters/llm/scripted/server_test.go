package scripted_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	openai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

// The streaming paths are exercised through the adapters' tests; these parse
// the non-streamed answers with the official SDKs, so both shapes are
// checked against the real client code.

func serve(t *testing.T, s *scripted.Server) string {
	t.Helper()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

var toolScript = scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{
	Text: "calling", ToolCalls: []scripted.ToolCall{{Name: "lookup", Arguments: `{"q":"x"}`}},
	Usage: &scripted.Usage{InputTokens: 7, OutputTokens: 3, CachedTokens: 2},
}}}}}

func TestNonStreamingAnswersParseWithTheSDKs(t *testing.T) {
	s := scripted.New(scripted.Options{})
	s.SetScript("tools", toolScript)
	url := serve(t, s)
	ctx := context.Background()
	oa := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))

	resp, err := oa.Responses.New(ctx, responses.ResponseNewParams{Model: "tools",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "calling" || len(resp.Output) != 2 || resp.Output[1].Name != "lookup" ||
		resp.Output[1].CallID != "call_0_0_0" || resp.Usage.InputTokensDetails.CachedTokens != 2 {
		t.Fatalf("responses: %s", resp.RawJSON())
	}

	cc, err := oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "tools",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go")}})
	if err != nil {
		t.Fatal(err)
	}
	choice := cc.Choices[0]
	if choice.Message.Content != "calling" || choice.FinishReason != "tool_calls" || choice.Message.ToolCalls[0].Function.Arguments != `{"q":"x"}` ||
		cc.Usage.PromptTokens != 7 || cc.Usage.CompletionTokens != 3 {
		t.Fatalf("chat: %s", cc.RawJSON())
	}

	an := anthropic.NewClient(anthropicoption.WithoutEnvironmentDefaults(), anthropicoption.WithBaseURL(url),
		anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
	msg, err := an.Messages.New(ctx, anthropic.MessageNewParams{Model: "tools", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 2 || msg.Content[0].Text != "calling" ||
		msg.Content[1].Name != "lookup" || string(msg.Content[1].Input) != `{"q":"x"}` || msg.Usage.CacheReadInputTokens != 2 {
		t.Fatalf("messages: %s", msg.RawJSON())
	}

	recs := s.Requests()
	if len(recs) != 3 || recs[0].API != "responses" || recs[1].API != "chat_completions" || recs[2].API != "messages" ||
		recs[2].Model != "tools" || !strings.Contains(string(recs[2].Body), `"max_tokens":100`) {
		t.Fatalf("recorded %+v", recs)
	}
}

func TestAPIKeyIsCheckedWhereEachVendorSendsIt(t *testing.T) {
	url := serve(t, scripted.New(scripted.Options{APIKey: "secret"}))
	post := func(path string, header http.Header) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(`{"model":"echo","input":"x","messages":[]}`))
		req.Header = header
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if code, body := post("/v1/responses", http.Header{"Authorization": {"Bearer wrong"}}); code != 401 ||
		body["error"].(map[string]any)["code"] != "invalid_api_key" {
		t.Fatalf("openai shape: %d %v", code, body)
	}
	if code, _ := post("/v1/responses", http.Header{"Authorization": {"Bearer secret"}}); code != 200 {
		t.Fatalf("right bearer: %d", code)
	}
	if code, body := post("/v1/messages", http.Header{"Authorization": {"Bearer secret"}}); code != 401 ||
		body["type"] != "error" || body["error"].(map[string]any)["type"] != "authentication_error" {
		t.Fatalf("anthropic shape: %d %v", code, body)
	}
	if code, _ := post("/v1/messages", http.Header{"X-Api-Key": {"secret"}}); code != 200 {
		t.Fatalf("right x-api-key: %d", code)
	}
}

// TestOverloadedInEachVendorsShape: the same Failure answers as each vendor
// says it is overloaded.
func TestOverloadedInEachVendorsShape(t *testing.T) {
	s := scripted.New(scripted.Options{})
	s.SetScript("busy", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Error: &scripted.Failure{Overloaded: true}}}}}})
	url := serve(t, s)
	post := func(path string) (int, string) {
		res, err := http.Post(url+path, "application/json", strings.NewReader(`{"model":"busy","input":"x","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, body := post("/v1/messages"); code != 529 || !strings.Contains(body, `"type":"overloaded_error"`) {
		t.Errorf("messages: %d %s", code, body)
	}
	for _, path := range []string{"/v1/responses", "/v1/chat/completions"} {
		if code, body := post(path); code != 503 || !strings.Contains(body, `"type":"server_error"`) {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
}

// TestRecordedReadersAskNothingOfAPlainRequest: a request without a schema,
// calls or reasoning reads back as empty in every protocol.
func TestRecordedReadersAskNothingOfAPlainRequest(t *testing.T) {
	for _, api := range []string{scripted.APIResponses, scripted.APIChatCompletions, scripted.APIMessages} {
		r := scripted.Recorded{API: api, Body: json.RawMessage(`{"model":"m","input":"hi","messages":[{"role":"user","content":"hi"}]}`)}
		if h := r.History(); r.OutputSchema() != nil || len(h.Calls) != 0 || len(h.Outputs) != 0 || len(h.Reasoning) != 0 {
			t.Errorf("%s: schema %s history %+v", api, r.OutputSchema(), h)
		}
	}
}

func TestModelsList(t *testing.T) {
	s := scripted.New(scripted.Options{})
	for name, sc := range scripted.DefaultScripts() {
		s.SetScript(name, sc)
	}
	url := serve(t, s)
	oa := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	page, err := oa.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "echo,slow-echo,think,tool-demo" {
		t.Fatalf("models %v", ids)
	}
}

// TestFailTimesUnderConcurrency: exactly FailTimes of many simultaneous
// requests fail.
func TestFailTimesUnderConcurrency(t *testing.T) {
	s := scripted.New(scripted.Options{})
	s.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "ok", FailTimes: 5}}}}})
	url := serve(t, s)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := http.Post(url+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[500] != 5 || codes[200] != 15 {
		t.Fatalf("status counts %v", codes)
	}
}

func TestLoadScripts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"demo": {"exchanges": [
		{"when": "weather", "steps": [
			{"reasoning": "r", "text": "t", "tool_calls": [{"name": "w", "arguments": "{\"city\":\"Oslo\"}", "call_id": "c1"}],
			 "usage": {"input_tokens": 5, "output_tokens": 6, "cached_tokens": 1}, "chunk_size": 3, "delay_ms": 2},
			{"echo_input": true, "fail_times": 1, "error": {"status": 429, "message": "slow down", "overflow": false, "overloaded": false, "mid_stream": true}},
			{"text": "t", "usage": {"input_tokens": 1, "output_tokens": 2, "cache_write_tokens": 3, "reasoning_tokens": 4}}
		]}]}}`)
	scripts, err := scripted.LoadScripts(good)
	if err != nil {
		t.Fatal(err)
	}
	ex := scripts["demo"].Exchanges[0]
	st := ex.Steps[0]
	if ex.When != "weather" || st.Reasoning != "r" || st.ToolCalls[0].CallID != "c1" || st.Usage.CachedTokens != 1 ||
		st.ChunkSize != 3 || st.DelayMS != 2 || !ex.Steps[1].EchoInput || ex.Steps[1].Error.Status != 429 || ex.Steps[1].FailTimes != 1 ||
		!ex.Steps[1].Error.MidStream || *ex.Steps[2].Usage != (scripted.Usage{InputTokens: 1, OutputTokens: 2, CacheWriteTokens: 3, ReasoningTokens: 4}) {
		t.Fatalf("loaded %+v", scripts)
	}
	for name, body := range map[string]string{
		"typo.json":    `{"m": {"exchanges": [{"steps": [{"txt": "oops"}]}]}}`,
		"args.json":    `{"m": {"exchanges": [{"steps": [{"tool_calls": [{"name": "f", "arguments": "{not json"}]}]}]}}`,
		"nosteps.json": `{"m": {"exchanges": [{"when": "x"}]}}`,
	} {
		if _, err := scripted.LoadScripts(write(name, body)); err == nil {
			t.Errorf("%s loaded", name)
		}
	}
	if _, err := scripted.LoadScripts(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

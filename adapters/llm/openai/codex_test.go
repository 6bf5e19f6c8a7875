package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/chatgpt"
	"github.com/agents-server/agents-server/adapters/chatgpt/chatgptdouble"
	"github.com/agents-server/agents-server/adapters/llm/internal/llmtest"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// keyCredentials signs every call in with the endpoint's key, so the
// contract's wrong-key and right-key calls reach the bridge as tokens.
type keyCredentials struct{}

func (keyCredentials) ChatGPTAccess(_ context.Context, ep ports.ProviderEndpoint) (ports.ChatGPTAccess, error) {
	return ports.ChatGPTAccess{AccessToken: ep.APIKey, AccountID: "acct"}, nil
}

func (k keyCredentials) ChatGPTRefresh(ctx context.Context, ep ports.ProviderEndpoint, _ string) (ports.ChatGPTAccess, error) {
	return k.ChatGPTAccess(ctx, ep) // the key is all there is
}

// The bridge keeps every promise of the model port: the contract, over
// the scripted server's Responses format.
func TestCodexContract(t *testing.T) {
	t.Parallel()
	llmtest.Contract(t, llmtest.Harness{
		Format: scripted.APIResponses,
		New:    func() ports.LLM { return openai.NewCodex(openai.CodexOptions{Credentials: keyCredentials{}}) },
		Endpoint: func(url string) ports.ProviderEndpoint {
			return ports.ProviderEndpoint{ProviderID: "p1", Name: "test-codex", Type: "openai", AuthMode: domain.AuthChatGPTLogin,
				API: "responses", BaseURL: url + "/v1", APIKey: "sk-test", Outbound: domain.OpenOutbound}
		},
	})
}

// doubleCredentials is a sign-in at the double, redeemed through the
// real auth client.
type doubleCredentials struct {
	access    ports.ChatGPTAccess
	refreshes int
}

func (c *doubleCredentials) ChatGPTAccess(context.Context, ports.ProviderEndpoint) (ports.ChatGPTAccess, error) {
	if c.access.AccessToken == "" {
		return c.access, errs.E(errs.Validation, "provider \"codex\" signs in with a ChatGPT account and is not signed in")
	}
	return c.access, nil
}

// ChatGPTRefresh has nothing to refresh with: the sign-in is revoked.
func (c *doubleCredentials) ChatGPTRefresh(context.Context, ports.ProviderEndpoint, string) (ports.ChatGPTAccess, error) {
	c.refreshes++
	return ports.ChatGPTAccess{}, errs.E(errs.Validation, "the ChatGPT sign-in of provider \"codex\" was revoked or has expired: sign in again")
}

func signedIn(t *testing.T, d *chatgptdouble.Double) *doubleCredentials {
	t.Helper()
	a := chatgpt.New(chatgpt.Options{Issuer: d.Issuer()})
	verifier := strings.Repeat("x", 43)
	cb, err := chatgptdouble.Consent(a.AuthorizeURL("st", verifier))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(cb)
	tok, err := a.Exchange(context.Background(), u.Query().Get("code"), verifier)
	if err != nil {
		t.Fatal(err)
	}
	return &doubleCredentials{access: ports.ChatGPTAccess{AccessToken: tok.AccessToken, AccountID: tok.AccountID}}
}

var codexEP = ports.ProviderEndpoint{ProviderID: "p1", Name: "codex", Type: "openai", AuthMode: domain.AuthChatGPTLogin, API: "responses"}

// Against the double, which refuses what the real backend refuses, a
// conversation that carries everything the backend rejects — item ids,
// another provider's reasoning, reasoning content, a stored prompt — goes
// through, and the backend's own reasoning is handed back on the next turn.
func TestCodexBridgeAgainstTheDouble(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	creds := signedIn(t, d)
	llm := openai.NewCodex(openai.CodexOptions{BaseURL: d.BackendURL(), Credentials: creds})
	ctx := context.Background()

	tools := []ports.ToolDef{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
	req := ports.ModelRequest{Endpoint: codexEP, Model: "gpt-5-codex", Instructions: "Be brief.", Tools: tools, PromptID: "pmpt_1",
		Input: []json.RawMessage{
			domain.TextMessage("user", "input_text", "earlier"),
			domain.Reasoning("rs_platform_1", "Thoughts on the platform.", "", "platform-blob"),
			domain.Reasoning("thinking_x_0", "Claude's thoughts.", "", "signature"),
			domain.Reasoning("rs_plain", "", "raw reasoning text", ""),
			domain.AssistantMessage("msg_old_1", "Earlier answer."),
			domain.TextMessage("user", "input_text", "please use the tool"),
		}}
	var deltas []ports.ModelDelta
	first, err := llm.Generate(ctx, req, func(dl ports.ModelDelta) { deltas = append(deltas, dl) })
	if err != nil {
		t.Fatalf("first turn: %v (the double saw %+v)", err, d.Requests())
	}
	if len(first.Output) != 2 || domain.ParseItem(first.Output[1]).Name != "lookup" {
		t.Fatalf("first output %s", first.Output)
	}
	rs := domain.ParseItem(first.Output[0])
	if rs.Kind() != domain.ItemReasoning || !strings.HasPrefix(rs.EncryptedContent, "codex:dbl_enc_") {
		t.Fatalf("the backend's reasoning is not marked as its own: %s", first.Output[0])
	}
	if len(deltas) == 0 || deltas[0].Kind != ports.DeltaArguments {
		t.Fatalf("deltas %+v", deltas)
	}
	sent := d.Requests()[0].Body
	if sent["store"] != false || sent["stream"] != true || sent["prompt"] != nil || !strings.Contains(jsonOf(sent["include"]), "reasoning.encrypted_content") {
		t.Fatalf("first request body %v", sent)
	}
	if in := jsonOf(sent["input"]); strings.Contains(in, "platform-blob") || strings.Contains(in, "signature") || strings.Contains(in, "raw reasoning") {
		t.Fatalf("foreign reasoning reached the backend: %s", in)
	}

	call := domain.ParseItem(first.Output[1])
	req.Input = append(append(req.Input, first.Output...), domain.FunctionCallOutput(call.CallID, "42"))
	second, err := llm.Generate(ctx, req, nil)
	if err != nil {
		t.Fatalf("second turn: %v (the double saw %+v)", err, d.Requests())
	}
	if got := llmtest.MessageText(t, second.Output[1]); got != "Tool said: 42" {
		t.Fatalf("second answer %q", got)
	}
	if in := jsonOf(d.Requests()[1].Body["input"]); !strings.Contains(in, strings.TrimPrefix(rs.EncryptedContent, "codex:")) {
		t.Fatalf("the backend's reasoning was not handed back: %s", in)
	}

	models, err := llm.Models(ctx, codexEP)
	if err != nil || len(models) == 0 || models[0].ID != "gpt-5-codex" {
		t.Fatalf("models = %v, %v", models, err)
	}

	// The backend's refusals arrive with its words, classified.
	req.Model = "gpt-4o"
	_, err = llm.Generate(ctx, req, nil)
	var me *ports.ModelError
	if !asModelError(err, &me) || me.Kind != ports.ModelInvalid || me.Status != 400 || !strings.Contains(me.Message, "not supported when using Codex") {
		t.Fatalf("unsupported model: %v", err)
	}
	d.RevokeAll()
	req.Model = "gpt-5-codex"
	// A token refused before its expiry is refreshed once; here the
	// refresh is refused too, and that is what the call reports.
	if _, err = llm.Generate(ctx, req, nil); !asModelError(err, &me) || me.Kind != ports.ModelAuth || !strings.Contains(me.Message, "sign in again") || creds.refreshes != 1 {
		t.Fatalf("revoked token: %v (%d refreshes)", err, creds.refreshes)
	}
	// No sign-in: nothing is sent, and the error names the sign-in.
	before := len(d.Requests())
	creds.access = ports.ChatGPTAccess{}
	if _, err = llm.Generate(ctx, req, nil); !asModelError(err, &me) || me.Kind != ports.ModelAuth || !strings.Contains(me.Message, "not signed in") {
		t.Fatalf("signed out: %v", err)
	}
	if len(d.Requests()) != before {
		t.Fatal("a call without a sign-in reached the backend")
	}
}

// The backend takes only the fields the Codex CLI sends and refuses a call
// without instructions: an agent's settings it does not take are left out
// and named on the response, an agent without instructions still gets
// some, and the conversation's key goes as prompt_cache_key.
func TestCodexBridgeSendsOnlyWhatTheBackendTakes(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	llm := openai.NewCodex(openai.CodexOptions{BaseURL: d.BackendURL(), Credentials: signedIn(t, d)})
	temp, topP, maxOut, parallel := 0.2, 0.9, 40, false
	req := ports.ModelRequest{Endpoint: codexEP, Model: "gpt-5-codex", PromptID: "pmpt_1", ConversationID: "session-1",
		Input: []json.RawMessage{domain.TextMessage("user", "input_text", "hi")},
		Settings: domain.ModelSettings{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, ParallelToolCalls: &parallel,
			ReasoningEffort: "low", Verbosity: "low"}}
	resp, err := llm.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("generate: %v (the double saw %+v)", err, d.Requests())
	}
	if got := strings.Join(resp.Dropped, ","); got != "max_output_tokens,prompt,temperature,top_p" {
		t.Fatalf("dropped %q", got)
	}
	sent := d.Requests()[0]
	if instr, _ := sent.Body["instructions"].(string); strings.TrimSpace(instr) == "" {
		t.Fatalf("no instructions sent: %v", sent.Body)
	}
	if sent.PromptCacheKey != "session-1" || sent.Body["parallel_tool_calls"] != false ||
		jsonOf(sent.Body["reasoning"]) != `{"effort":"low"}` || jsonOf(sent.Body["text"]) != `{"verbosity":"low"}` {
		t.Fatalf("the settings the backend takes did not all go: %v", sent.Body)
	}

	// Nothing to leave out: nothing named; no conversation: no cache key.
	resp, err = llm.Generate(context.Background(), ports.ModelRequest{Endpoint: codexEP, Model: "gpt-5-codex", Instructions: "Be brief.",
		Input: []json.RawMessage{domain.TextMessage("user", "input_text", "hi")}}, nil)
	if err != nil || resp.Dropped != nil {
		t.Fatalf("a plain call: dropped %v, %v", resp.Dropped, err)
	}
	if sent := d.Requests()[1]; sent.Body["instructions"] != "Be brief." || sent.Body["prompt_cache_key"] != nil {
		t.Fatalf("a plain call sent %v", sent.Body)
	}
}

// The platform adapter drops the backend's reasoning: OpenAI's API cannot
// open a blob the backend made.
func TestPlatformDropsCodexReasoning(t *testing.T) {
	t.Parallel()
	f := start(t, scripted.Options{})
	f.srv.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "ok"}}}}})
	req := f.request(scripted.APIResponses, "m", domain.TextMessage("user", "input_text", "hi"),
		domain.Reasoning("rs_codex_1", "Codex thoughts.", "", "codex:dbl_enc_1"), domain.AssistantMessage("", "Earlier."))
	if _, err := openai.New(openai.Options{}).Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if body := string(f.srv.Requests()[0].Body); strings.Contains(body, "dbl_enc_1") || !strings.Contains(body, "Earlier.") {
		t.Fatalf("request %s", body)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func asModelError(err error, me **ports.ModelError) bool {
	return errors.As(err, me)
}

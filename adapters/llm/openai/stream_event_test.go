package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// A stream event is read as the SDK's decoder reads it: fields leniently
// (null or missing is "", a number its text), an event that is not an
// object refused with the SDK's own error.
func TestStreamEventsReadAsTheSDKReadsThem(t *testing.T) {
	raw := []byte(`{"type":"error","code":429,"message":null,"delta":"a\u00e9\n","item":{"type":"function_call","call_id":"c1"}}`)
	var ev streamEvent
	var sdk responses.ResponseStreamEventUnion
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sdk); err != nil {
		t.Fatal(err)
	}
	got := []string{ev.field("type"), ev.field("code"), ev.field("message"), ev.field("delta"), ev.field("item.type"), ev.field("item.call_id")}
	want := []string{sdk.Type, sdk.Code, sdk.Message, sdk.Delta, sdk.Item.Type, sdk.Item.CallID}
	if !reflect.DeepEqual(got, want) || got[1] != "429" || got[3] != "aé\n" {
		t.Errorf("read %q, the SDK reads %q", got, want)
	}
	wantErr := json.Unmarshal([]byte(`[1]`), &sdk)
	gotErr := json.Unmarshal([]byte(`[1]`), &streamEvent{})
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("a non-object event: %v, the SDK says %v", gotErr, wantErr)
	}
}

// A completed response is read from its JSON as the SDK's decoding of it
// was read: every item kind, a refusal, the content filter, the usage
// (total made up when absent), an item of another type kept as it came.
func TestACompletedResponseReadsAsTheSDKReadsIt(t *testing.T) {
	for _, raw := range []string{
		`{"id":"resp_1","model":"gpt-x","output":[
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"first"},{"type":"summary_text","text":"second"}],
			 "content":[{"type":"reasoning_text","text":"a"},{"type":"reasoning_text","text":"b"}],"encrypted_content":"enc"},
			{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hello, \u00e9"},{"type":"refusal","refusal":"no"},{"type":"output_text","text":"!"}]},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"x\"}"},
			{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}],
		 "usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15,"input_tokens_details":{"cached_tokens":3,"cache_write_tokens":2}}}`,
		`{"id":"resp_2","model":"m","output":[{"type":"message","id":null,"content":[]}],"incomplete_details":{"reason":"content_filter"},
		 "usage":{"input_tokens":7,"output_tokens":1}}`,
		`{"id":"resp_3","output":null}`,
	} {
		var sdk responses.Response
		if err := json.Unmarshal([]byte(raw), &sdk); err != nil {
			t.Fatal(err)
		}
		var ev streamEvent
		if err := json.Unmarshal([]byte(`{"type":"response.completed","response":`+raw+`}`), &ev); err != nil {
			t.Fatal(err)
		}
		if got, want := fromResponse(ev.response()), sdkReading(&sdk); !reflect.DeepEqual(got, want) {
			t.Errorf("read\n%+v\nthe SDK's decoding reads\n%+v", got, want)
		}
	}
}

// sdkReading is how a response decoded by the SDK was read before
// fromResponse read its JSON: the reference the reading is held to.
func sdkReading(r *responses.Response) ports.ModelResponse {
	out := ports.ModelResponse{ResponseID: r.ID, Model: string(r.Model)}
	for _, it := range r.Output {
		switch it.Type {
		case domain.ItemMessage:
			var text, refusal strings.Builder
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					refusal.WriteString(c.Refusal)
				}
			}
			out.Refusal += refusal.String()
			if text.Len() > 0 {
				out.Output = append(out.Output, domain.AssistantMessage(it.ID, text.String()))
			}
		case domain.ItemFunctionCall:
			out.Output = append(out.Output, domain.FunctionCall(it.ID, it.CallID, it.Name, it.Arguments.OfString))
		case domain.ItemReasoning:
			var summary, content []string
			for _, s := range it.Summary {
				summary = append(summary, s.Text)
			}
			for _, c := range it.Content {
				content = append(content, c.Text)
			}
			out.Output = append(out.Output, domain.Reasoning(it.ID, strings.Join(summary, "\n\n"), strings.Join(content, ""), it.EncryptedContent))
		default:
			out.Output = append(out.Output, json.RawMessage(it.RawJSON()))
		}
	}
	if r.IncompleteDetails.Reason == "content_filter" && out.Refusal == "" {
		out.Refusal = "the provider's content filter stopped the answer"
	}
	u := r.Usage
	out.Usage = domain.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.InputTokensDetails.CachedTokens, CacheWriteTokens: u.InputTokensDetails.CacheWriteTokens}
	if out.Usage.TotalTokens == 0 {
		out.Usage.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return out
}

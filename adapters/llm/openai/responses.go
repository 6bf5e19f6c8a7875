package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// generateResponses makes one streamed Responses call: deltas go to sink as
// they arrive, and the completed response's output items are returned.
// The SDK makes the request and frames the stream (its errors, [DONE],
// error events); the events are read as streamEvent, not decoded whole.
func generateResponses(ctx context.Context, svc *responses.ResponseService, provider string, params responses.ResponseNewParams, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	var raw *http.Response
	sdk := svc.NewStreaming(ctx, params, option.WithResponseInto(&raw))
	defer sdk.Close()
	stream := ssestream.NewStream[streamEvent](ssestream.NewDecoder(raw), sdk.Err())
	defer stream.Close()
	// arguments deltas name only their item; the call's identity arrives
	// with output_item.added
	calls := map[string]ports.ModelDelta{}
	var final *ports.ModelResponse
	var failure error
	// counted is what a failed response said it used, which a failure
	// still returns.
	var counted domain.Usage
	for stream.Next() {
		ev := stream.Current()
		switch ev.field("type") {
		case "response.output_text.delta":
			sink(ports.ModelDelta{Kind: ports.DeltaText, Text: ev.field("delta")})
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			sink(ports.ModelDelta{Kind: ports.DeltaReasoning, Text: ev.field("delta")})
		case "response.output_item.added":
			if ev.field("item.type") == domain.ItemFunctionCall {
				calls[ev.field("item.id")] = ports.ModelDelta{CallID: ev.field("item.call_id"), Name: ev.field("item.name")}
			}
		case "response.function_call_arguments.delta":
			d := calls[ev.field("item_id")]
			d.Kind, d.Text = ports.DeltaArguments, ev.field("delta")
			sink(d)
		case "response.completed", "response.incomplete":
			r := fromResponse(ev.response())
			final = &r
		case "response.failed":
			failure = streamFailure(provider, ev.field("response.error.code"), ev.field("response.error.message"), nil)
			counted = fromResponse(ev.response()).Usage
		case "error":
			failure = streamFailure(provider, ev.field("code"), ev.field("message"), nil)
		}
	}
	if err := stream.Err(); err != nil {
		return ports.ModelResponse{}, classify(ctx, provider, err)
	}
	if err := ctx.Err(); err != nil {
		return ports.ModelResponse{}, err
	}
	if failure != nil {
		return ports.ModelResponse{Usage: counted}, failure
	}
	if final == nil {
		return ports.ModelResponse{}, truncated(provider)
	}
	return *final, nil
}

// responsesParams translates the request; fields left unset keep the
// provider's defaults.
func responsesParams(req ports.ModelRequest) responses.ResponseNewParams {
	s := req.Settings
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(req.Model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responsesInput(req.Input)},
	}
	if req.Instructions != "" {
		p.Instructions = param.NewOpt(req.Instructions)
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, functionTool(t))
	}
	switch choice := toolChoice(req); choice {
	case "":
	case "auto", "required", "none":
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptions(choice))}
	default:
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: choice}}
	}
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.MaxOutputTokens != nil {
		p.MaxOutputTokens = param.NewOpt(int64(*s.MaxOutputTokens))
	}
	if s.ParallelToolCalls != nil {
		p.ParallelToolCalls = param.NewOpt(*s.ParallelToolCalls)
	}
	if s.ReasoningEffort != "" || s.ReasoningSummary != "" {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(s.ReasoningEffort), Summary: shared.ReasoningSummary(s.ReasoningSummary)}
	}
	if s.Verbosity != "" {
		p.Text.Verbosity = responses.ResponseTextConfigVerbosity(s.Verbosity)
	}
	if len(req.OutputSchema) > 0 {
		schema := schemaMap(req.OutputSchema)
		p.Text.Format = responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "output", Schema: schema, Strict: param.NewOpt(strictReady(schema)),
		}}
	}
	if req.PromptID != "" {
		p.Prompt = responses.ResponsePromptParam{ID: req.PromptID, Version: optString(req.PromptVersion)}
	}
	return p
}

// toolChoice is the request's choice, else the agent's setting.
func toolChoice(req ports.ModelRequest) string {
	if req.ToolChoice != "" {
		return req.ToolChoice
	}
	return req.Settings.ToolChoice
}

// strictReady reports whether a schema was written for strict mode (its
// object closes additionalProperties); strict on any other schema is refused.
func strictReady(schema map[string]any) bool {
	closed, ok := schema["additionalProperties"].(bool)
	return ok && !closed
}

func optString(s string) param.Opt[string] {
	if s == "" {
		return param.Opt[string]{}
	}
	return param.NewOpt(s)
}

// responsesInput translates internal items. Items that carry OpenAI's own
// ids (msg_, fc_, rs_) are sent with them, since reasoning items are paired
// with the output that follows them by id; reasoning from other providers
// (no rs_ id) means nothing to OpenAI and is dropped.
func responsesInput(raws []json.RawMessage) responses.ResponseInputParam {
	var out responses.ResponseInputParam
	for _, raw := range raws {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case domain.ItemMessage:
			out = append(out, messageParam(it))
		case domain.ItemFunctionCall:
			out = append(out, callParam(it, strings.HasPrefix(it.ID, "fc_")))
		case domain.ItemFunctionCallOutput:
			out = append(out, callOutputParam(it))
		case domain.ItemReasoning:
			// the Codex backend's reasoning is its own (codexNative)
			if !strings.HasPrefix(it.ID, "rs_") || codexNative(it) {
				continue
			}
			r := &responses.ResponseReasoningItemParam{ID: it.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
			for _, s := range it.Summary {
				r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: s.Text})
			}
			if it.EncryptedContent != "" {
				r.EncryptedContent = param.NewOpt(it.EncryptedContent)
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: r})
		case "":
		default:
			// another Responses item type (a hosted tool's call, say) is
			// already in the wire shape
			out = append(out, param.Override[responses.ResponseInputItemUnionParam](raw))
		}
	}
	return out
}

// callParam is a function call as input; keepID sends the item's id,
// which only OpenAI's own (fc_) ids may be.
func callParam(it domain.Item, keepID bool) responses.ResponseInputItemUnionParam {
	args := it.Arguments
	if args == "" {
		args = "{}"
	}
	fc := &responses.ResponseFunctionToolCallParam{Arguments: args, CallID: it.CallID, Name: it.Name}
	if keepID {
		fc.ID = param.NewOpt(it.ID)
	}
	return responses.ResponseInputItemUnionParam{OfFunctionCall: fc}
}

// callOutputParam is a function call's output as input.
func callOutputParam(it domain.Item) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
		CallID: param.NewOpt(it.CallID),
		Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(it.OutputText())},
	}}
}

func messageParam(it domain.Item) responses.ResponseInputItemUnionParam {
	if it.Role == "assistant" && strings.HasPrefix(it.ID, "msg_") {
		text := &responses.ResponseOutputTextParam{Text: it.Text(), Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}
		return responses.ResponseInputItemParamOfOutputMessage(
			[]responses.ResponseOutputMessageContentUnionParam{{OfOutputText: text}}, it.ID, responses.ResponseOutputMessageStatusCompleted)
	}
	role := it.Role
	if role == "" {
		role = "user"
	}
	if it.HasImages() {
		return responses.ResponseInputItemParamOfMessage(inputContent(it.Parts()), responses.EasyInputMessageRole(role))
	}
	return responses.ResponseInputItemParamOfMessage(it.Text(), responses.EasyInputMessageRole(role))
}

// inputContent is a message's text and images as input_text and
// input_image parts.
func inputContent(parts []domain.ContentPart) responses.ResponseInputMessageContentListParam {
	var out responses.ResponseInputMessageContentListParam
	for _, p := range parts {
		switch {
		case p.Type == domain.PartInputImage && p.ImageURL != "":
			detail := responses.ResponseInputImageDetail(p.Detail)
			if detail == "" {
				detail = responses.ResponseInputImageDetailAuto
			}
			out = append(out, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				ImageURL: param.NewOpt(p.ImageURL), Detail: detail}})
		case p.Text != "":
			out = append(out, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: p.Text}})
		}
	}
	return out
}

// fromResponse re-marshals a completed response's output in the internal
// item shape, with its usage and any refusal. It reads the response's JSON
// (the ending event's "response") with gjson, as streamEvent reads the
// deltas: the few fields it uses, leniently, instead of the SDK's
// reflective decoding of the whole response (which echoes the request's
// instructions and tools) — an item of another type is kept as it came.
func fromResponse(r gjson.Result) ports.ModelResponse {
	out := ports.ModelResponse{ResponseID: r.Get("id").String(), Model: r.Get("model").String()}
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").String() {
		case domain.ItemMessage:
			var text, refusal strings.Builder
			for _, c := range it.Get("content").Array() {
				switch c.Get("type").String() {
				case "output_text":
					text.WriteString(c.Get("text").String())
				case "refusal":
					refusal.WriteString(c.Get("refusal").String())
				}
			}
			if refusal.Len() > 0 {
				out.Refusal += refusal.String()
			}
			if text.Len() > 0 {
				out.Output = append(out.Output, domain.AssistantMessage(it.Get("id").String(), text.String()))
			}
		case domain.ItemFunctionCall:
			var args string // a string, as the SDK's union takes it
			if a := it.Get("arguments"); a.Type == gjson.String {
				args = a.Str
			}
			out.Output = append(out.Output, domain.FunctionCall(it.Get("id").String(), it.Get("call_id").String(), it.Get("name").String(), args))
		case domain.ItemReasoning:
			var summary, content []string
			for _, s := range it.Get("summary").Array() {
				summary = append(summary, s.Get("text").String())
			}
			for _, c := range it.Get("content").Array() {
				content = append(content, c.Get("text").String())
			}
			out.Output = append(out.Output, domain.Reasoning(it.Get("id").String(), strings.Join(summary, "\n\n"), strings.Join(content, ""),
				it.Get("encrypted_content").String()))
		default:
			out.Output = append(out.Output, json.RawMessage(it.Raw))
		}
	}
	if r.Get("incomplete_details.reason").String() == "content_filter" && out.Refusal == "" {
		out.Refusal = "the provider's content filter stopped the answer"
	}
	u := r.Get("usage")
	out.Usage = domain.Usage{
		InputTokens: u.Get("input_tokens").Int(), OutputTokens: u.Get("output_tokens").Int(), TotalTokens: u.Get("total_tokens").Int(),
		CachedTokens: u.Get("input_tokens_details.cached_tokens").Int(), CacheWriteTokens: u.Get("input_tokens_details.cache_write_tokens").Int(),
		ReasoningTokens: u.Get("output_tokens_details.reasoning_tokens").Int(),
	}
	if out.Usage.TotalTokens == 0 {
		out.Usage.TotalTokens = out.Usage.InputTokens + out.Usage.OutputTokens
	}
	return out
}

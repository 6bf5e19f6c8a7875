package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// generateChat makes one streamed Chat Completions call and rebuilds the
// answer as internal items from the chunks.
func generateChat(ctx context.Context, svc *openai.ChatCompletionService, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	provider := req.Endpoint.Name
	stream := svc.NewStreaming(ctx, chatParams(req))
	defer stream.Close()
	var acc chatAccumulator
	for stream.Next() {
		acc.add(stream.Current(), sink)
	}
	if err := stream.Err(); err != nil {
		return ports.ModelResponse{}, classify(ctx, provider, err)
	}
	if err := ctx.Err(); err != nil {
		return ports.ModelResponse{}, err
	}
	// a stream cut short can still end cleanly at EOF; only a finish_reason
	// proves the answer is whole
	if acc.finish == "" {
		return ports.ModelResponse{}, truncated(provider)
	}
	return acc.response(), nil
}

func chatParams(req ports.ModelRequest) openai.ChatCompletionNewParams {
	s := req.Settings
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      chatMessages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: optString(t.Description), Parameters: shared.FunctionParameters(schemaMap(t.Parameters)),
		}))
	}
	// tool_choice and parallel_tool_calls are refused without tools
	if len(req.Tools) > 0 {
		switch choice := toolChoice(req); choice {
		case "":
		case "auto", "required", "none":
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(choice)}
		default:
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
				Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: choice},
			}}
		}
		if s.ParallelToolCalls != nil {
			p.ParallelToolCalls = param.NewOpt(*s.ParallelToolCalls)
		}
	}
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.MaxOutputTokens != nil {
		p.MaxCompletionTokens = param.NewOpt(int64(*s.MaxOutputTokens))
	}
	if s.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(s.ReasoningEffort)
	}
	if s.Verbosity != "" {
		p.Verbosity = openai.ChatCompletionNewParamsVerbosity(s.Verbosity)
	}
	if len(req.OutputSchema) > 0 {
		schema := schemaMap(req.OutputSchema)
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "output", Schema: schema, Strict: param.NewOpt(strictReady(schema))},
		}}
	}
	return p
}

// chatMessages translates internal items: the instructions become the
// system message, function_call items join the assistant message they
// follow as tool_calls, outputs become tool messages, and reasoning (which
// Chat Completions cannot take back) is dropped.
func chatMessages(req ports.ModelRequest) []openai.ChatCompletionMessageParamUnion {
	var msgs []openai.ChatCompletionMessageParamUnion
	if req.Instructions != "" {
		msgs = append(msgs, openai.SystemMessage(req.Instructions))
	}
	var pending *openai.ChatCompletionAssistantMessageParam
	flush := func() {
		if pending != nil && (!param.IsOmitted(pending.Content.OfString) || len(pending.ToolCalls) > 0) {
			msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: pending})
		}
		pending = nil
	}
	for _, raw := range req.Input {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case domain.ItemMessage:
			flush()
			text := it.Text()
			switch it.Role {
			case "assistant":
				pending = &openai.ChatCompletionAssistantMessageParam{}
				if text != "" {
					pending.Content.OfString = param.NewOpt(text)
				}
			case "system":
				msgs = append(msgs, openai.SystemMessage(text))
			case "developer":
				msgs = append(msgs, openai.DeveloperMessage(text))
			default:
				if it.HasImages() {
					msgs = append(msgs, openai.UserMessage(chatContent(it.Parts())))
				} else {
					msgs = append(msgs, openai.UserMessage(text))
				}
			}
		case domain.ItemFunctionCall:
			if pending == nil {
				pending = &openai.ChatCompletionAssistantMessageParam{}
			}
			args := it.Arguments
			if args == "" {
				args = "{}"
			}
			pending.ToolCalls = append(pending.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       it.CallID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: it.Name, Arguments: args},
				},
			})
		case domain.ItemFunctionCallOutput:
			flush()
			msgs = append(msgs, openai.ToolMessage(it.OutputText(), it.CallID))
		}
	}
	flush()
	return msgs
}

// chatAccumulator folds chunks into the answer; tool calls stream as
// fragments keyed by index, the id and name in the first.
type chatAccumulator struct {
	id, model                string
	text, reasoning, refusal strings.Builder
	calls                    []*chatCall
	finish                   string
	usage                    openai.CompletionUsage
}

type chatCall struct {
	id, name string
	args     strings.Builder
}

// maxToolCalls bounds the index a server may name, so a broken one cannot
// make the accumulator allocate without limit.
const maxToolCalls = 1024

func (a *chatAccumulator) add(ch openai.ChatCompletionChunk, sink func(ports.ModelDelta)) {
	if a.id == "" {
		a.id = ch.ID
	}
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		a.usage = ch.Usage
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue // only one choice is ever asked for
		}
		d := c.Delta
		if r := extraString(d.JSON.ExtraFields, "reasoning_content", "reasoning"); r != "" {
			a.reasoning.WriteString(r)
			sink(ports.ModelDelta{Kind: ports.DeltaReasoning, Text: r})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			sink(ports.ModelDelta{Kind: ports.DeltaText, Text: d.Content})
		}
		a.refusal.WriteString(d.Refusal)
		for _, tc := range d.ToolCalls {
			if tc.Index < 0 || tc.Index >= maxToolCalls {
				continue
			}
			for int64(len(a.calls)) <= tc.Index {
				a.calls = append(a.calls, &chatCall{})
			}
			call := a.calls[tc.Index]
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			if tc.Function.Arguments != "" {
				call.args.WriteString(tc.Function.Arguments)
				sink(ports.ModelDelta{Kind: ports.DeltaArguments, Text: tc.Function.Arguments, CallID: call.id, Name: call.name})
			}
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
}

// extraString reads the first of the named non-standard string fields;
// OpenAI-compatible servers stream reasoning in "reasoning_content" or
// "reasoning", which the SDK keeps as extra fields (marked not Valid, as
// fields it has no type for, but with their raw JSON).
func extraString(extra map[string]respjson.Field, names ...string) string {
	for _, n := range names {
		var s string
		if json.Unmarshal([]byte(extra[n].Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (a *chatAccumulator) response() ports.ModelResponse {
	out := ports.ModelResponse{ResponseID: a.id, Model: a.model, Refusal: a.refusal.String()}
	if a.finish == "content_filter" && out.Refusal == "" {
		out.Refusal = "the provider's content filter stopped the answer"
	}
	// items from Chat Completions carry no ids: an OpenAI-looking id would
	// make the Responses translation send them as stored items
	if a.reasoning.Len() > 0 {
		out.Output = append(out.Output, domain.Reasoning("", a.reasoning.String(), "", ""))
	}
	if a.text.Len() > 0 {
		out.Output = append(out.Output, domain.AssistantMessage("", a.text.String()))
	}
	for i, c := range a.calls {
		if c.name == "" {
			continue // an index the server skipped
		}
		id := c.id
		if id == "" {
			// some compatible servers omit ids; the runner pairs outputs by it
			id = fmt.Sprintf("call_%s_%d", a.id, i)
		}
		args := c.args.String()
		if args == "" {
			args = "{}"
		}
		out.Output = append(out.Output, domain.FunctionCall("", id, c.name, args))
	}
	u := a.usage
	out.Usage = domain.Usage{
		InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.PromptTokensDetails.CachedTokens, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
	}
	if out.Usage.TotalTokens == 0 {
		out.Usage.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return out
}

// chatContent is a user message's text and images as text and image_url
// parts.
func chatContent(parts []domain.ContentPart) []openai.ChatCompletionContentPartUnionParam {
	var out []openai.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch {
		case p.Type == domain.PartInputImage && p.ImageURL != "":
			detail := p.Detail
			if detail == "" {
				detail = "auto"
			}
			out = append(out, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: p.ImageURL, Detail: detail}))
		case p.Text != "":
			out = append(out, openai.TextContentPart(p.Text))
		}
	}
	return out
}

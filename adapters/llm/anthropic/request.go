package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// defaultMaxTokens is max_tokens when the agent sets none; Messages requires
// one.
const defaultMaxTokens = 8192

// thinkingPrefix marks reasoning items made from Anthropic thinking blocks:
// only those carry a signature Anthropic accepts back.
const thinkingPrefix = "thinking_"

func messageParams(req ports.ModelRequest) anthropic.MessageNewParams {
	s := req.Settings
	maxTokens := int64(defaultMaxTokens)
	if s.MaxOutputTokens != nil && *s.MaxOutputTokens > 0 {
		maxTokens = int64(*s.MaxOutputTokens)
	}
	system, msgs := translateInput(req)
	p := anthropic.MessageNewParams{Model: req.Model, MaxTokens: maxTokens, System: system, Messages: msgs}

	choice := req.ToolChoice
	if choice == "" {
		choice = s.ToolChoice
	}
	// Anthropic refuses thinking with a forced tool choice, and a tool loop
	// whose assistant turn has no thinking block (it came from elsewhere)
	// cannot continue with thinking on; the choice and the loop win.
	forced := choice != "" && choice != "auto" && choice != "none"
	budget := thinkingBudget(s.ReasoningEffort, maxTokens)
	thinking := budget > 0 && !forced && !openToolTurnWithoutThinking(msgs)
	if thinking {
		p.Thinking = anthropic.ThinkingConfigParamUnion{OfEnabled: &anthropic.ThinkingConfigEnabledParam{BudgetTokens: budget}}
	}
	// with thinking on, Anthropic accepts no temperature and top_p only from 0.95
	if s.Temperature != nil && !thinking {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil && (!thinking || *s.TopP >= 0.95) {
		p.TopP = param.NewOpt(*s.TopP)
	}
	for _, t := range req.Tools {
		tool := &anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Parameters)}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}
	if len(req.Tools) > 0 {
		p.ToolChoice = toolChoice(choice, s.ParallelToolCalls)
	}
	if len(req.OutputSchema) > 0 {
		var schema map[string]any
		if json.Unmarshal(req.OutputSchema, &schema) == nil {
			p.OutputConfig.Format = anthropic.JSONOutputFormatParam{Schema: schema}
		}
	}
	return p
}

// thinkingBudget maps a reasoning effort to a thinking budget: a share of
// max_tokens (which must exceed it, the rest being the answer), at least
// Anthropic's minimum of 1024. Zero means no extended thinking.
func thinkingBudget(effort domain.ReasoningEffort, maxTokens int64) int64 {
	var budget int64
	switch effort {
	case "", "none":
		return 0
	case domain.EffortMinimal:
		budget = 1024
	case domain.EffortLow:
		budget = maxTokens / 4
	case domain.EffortMedium:
		budget = maxTokens / 2
	default: // high and above
		budget = maxTokens * 3 / 4
	}
	budget = max(budget, 1024)
	if budget >= maxTokens {
		return 0
	}
	return budget
}

// toolChoice maps auto/required/none/a tool name; parallel false becomes
// disable_parallel_tool_use, which needs a choice object to ride on.
func toolChoice(choice string, parallel *bool) anthropic.ToolChoiceUnionParam {
	var disable param.Opt[bool]
	if parallel != nil && !*parallel {
		disable = param.NewOpt(true)
	}
	switch choice {
	case "none":
		return anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	case "required":
		return anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: disable}}
	case "", "auto":
		if choice == "" && !disable.Valid() {
			return anthropic.ToolChoiceUnionParam{}
		}
		return anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: disable}}
	default:
		return anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: choice, DisableParallelToolUse: disable}}
	}
}

// inputSchema splits a JSON Schema object into the SDK's typed fields and
// keeps every other keyword ($defs, additionalProperties, …) as extras.
func inputSchema(raw json.RawMessage) anthropic.ToolInputSchemaParam {
	var m map[string]any
	_ = json.Unmarshal(raw, &m) // an unreadable schema is the empty object
	s := anthropic.ToolInputSchemaParam{Properties: map[string]any{}}
	for k, v := range m {
		switch k {
		case "type":
		case "properties":
			if v != nil {
				s.Properties = v
			}
		case "required":
			if list, ok := v.([]any); ok {
				for _, r := range list {
					if name, ok := r.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// translateInput turns internal items into the system prompt and the
// alternating user/assistant turns Messages takes: consecutive items of one
// role share a turn, function calls are tool_use blocks of the assistant
// turn, their outputs tool_result blocks of the next user turn, and only
// Anthropic's own signed reasoning comes back as thinking blocks.
func translateInput(req ports.ModelRequest) ([]anthropic.TextBlockParam, []anthropic.MessageParam) {
	var system []anthropic.TextBlockParam
	if req.Instructions != "" {
		system = append(system, anthropic.TextBlockParam{Text: req.Instructions})
	}
	var msgs []anthropic.MessageParam
	add := func(role anthropic.MessageParamRole, b anthropic.ContentBlockParamUnion) {
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, b)
			return
		}
		msgs = append(msgs, anthropic.MessageParam{Role: role, Content: []anthropic.ContentBlockParamUnion{b}})
	}
	for _, raw := range req.Input {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case domain.ItemMessage:
			if it.Role == "user" && it.HasImages() {
				for _, b := range userBlocks(it.Parts()) {
					add(anthropic.MessageParamRoleUser, b)
				}
				continue
			}
			text := it.Text()
			if text == "" {
				continue // Messages refuses empty text blocks
			}
			switch it.Role {
			case "system", "developer":
				system = append(system, anthropic.TextBlockParam{Text: text})
			case "assistant":
				add(anthropic.MessageParamRoleAssistant, anthropic.NewTextBlock(text))
			default:
				add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(text))
			}
		case domain.ItemFunctionCall:
			add(anthropic.MessageParamRoleAssistant, anthropic.NewToolUseBlock(it.CallID, toolInput(it.Arguments), it.Name))
		case domain.ItemFunctionCallOutput:
			result := &anthropic.ToolResultBlockParam{ToolUseID: it.CallID}
			if out := it.OutputText(); out != "" {
				result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: out}}}
			}
			add(anthropic.MessageParamRoleUser, anthropic.ContentBlockParamUnion{OfToolResult: result})
		case domain.ItemReasoning:
			if it.EncryptedContent != "" && strings.HasPrefix(it.ID, thinkingPrefix) {
				add(anthropic.MessageParamRoleAssistant, anthropic.NewThinkingBlock(it.EncryptedContent, it.ReasoningText()))
			}
		}
	}
	if len(msgs) > 0 && msgs[0].Role == anthropic.MessageParamRoleAssistant {
		// Messages opens on a user turn. A compacted history can open on
		// the assistant (its summary went to the system prompt): say so.
		msgs = append([]anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(foldedOpening))}, msgs...)
	}
	return system, msgs
}

// userBlocks is a user message's text and images as text and base64
// image blocks (Messages takes an image inline only as media type plus
// data, not a data URL).
func userBlocks(parts []domain.ContentPart) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch {
		case p.Type == domain.PartInputImage:
			if mime, data, ok := domain.ParseDataURL(p.ImageURL); ok {
				out = append(out, anthropic.NewImageBlockBase64(mime, data))
			} else if p.ImageURL != "" {
				out = append(out, anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: p.ImageURL}))
			}
		case p.Text != "":
			out = append(out, anthropic.NewTextBlock(p.Text))
		}
	}
	return out
}

// foldedOpening is the user turn put before a history that opens on the
// assistant's.
const foldedOpening = "(The earlier conversation is summarized in the system prompt.)"

// toolInput is a call's arguments as the JSON object tool_use takes; text
// that is not an object (a model's malformed call) becomes {}.
func toolInput(args string) json.RawMessage {
	raw := json.RawMessage(strings.TrimSpace(args))
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return raw
}

// openToolTurnWithoutThinking reports whether the conversation is inside a
// tool loop (last user turn holds tool results) whose assistant turn does
// not start with a thinking block.
func openToolTurnWithoutThinking(msgs []anthropic.MessageParam) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != anthropic.MessageParamRoleUser || msgs[n-2].Role != anthropic.MessageParamRoleAssistant {
		return false
	}
	results := false
	for _, b := range msgs[n-1].Content {
		results = results || b.OfToolResult != nil
	}
	first := msgs[n-2].Content[0]
	return results && first.OfThinking == nil && first.OfRedactedThinking == nil
}

package sessions

import (
	"encoding/json"
	"slices"

	"github.com/agents-server/agents-server/core/domain"
)

// LimitHistory keeps the last n items (0: all), never starting on a tool
// output whose call was cut off.
func LimitHistory(input []json.RawMessage, n int) []json.RawMessage {
	if n <= 0 || len(input) <= n {
		return input
	}
	out := input[len(input)-n:]
	for len(out) > 0 && domain.ParseItem(out[0]).Kind() == domain.ItemFunctionCallOutput {
		out = out[1:]
	}
	return out
}

// WithoutReasoningIDs strips the id of reasoning items (an agent whose
// reasoning_item_id_policy is omit), leaving input as it is.
func WithoutReasoningIDs(input []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(input))
	for i, raw := range input {
		out[i] = raw
		if domain.ParseItem(raw).Kind() != domain.ItemReasoning {
			continue
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			delete(m, "id")
			out[i], _ = json.Marshal(m)
		}
	}
	return out
}

// WithoutTools is the history a handoff's remove_all_tools filter passes
// on: the conversation without tool calls and their outputs.
func WithoutTools(input []json.RawMessage) []json.RawMessage {
	return slices.DeleteFunc(slices.Clone(input), func(raw json.RawMessage) bool {
		k := domain.ParseItem(raw).Kind()
		return k == domain.ItemFunctionCall || k == domain.ItemFunctionCallOutput
	})
}

package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// generate makes one streamed Messages call and rebuilds the answer as
// internal items from the content blocks.
func generate(ctx context.Context, sdk *anthropic.Client, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	provider := req.Endpoint.Name
	stream := sdk.Messages.NewStreaming(ctx, messageParams(req))
	defer stream.Close()
	var acc accumulator
	for stream.Next() {
		acc.add(stream.Current(), sink)
	}
	// A call that fails or is cancelled after message_start still says
	// what the provider counted: its input, and the output so far.
	counted := ports.ModelResponse{Usage: acc.usage()}
	if err := stream.Err(); err != nil {
		return counted, classify(ctx, provider, err)
	}
	if err := ctx.Err(); err != nil {
		return counted, err
	}
	if !acc.stopped {
		return counted, &ports.ModelError{Kind: ports.ModelUnavailable, Provider: provider,
			Message: "the stream ended before the message completed"}
	}
	if acc.stopReason == anthropic.StopReasonModelContextWindowExceeded {
		// a success-shaped stop: the answer was cut off by the window itself
		return counted, &ports.ModelError{Kind: ports.ModelOverflow, Provider: provider,
			Message: "the conversation exceeds the model's context window"}
	}
	return acc.response(), nil
}

// block is one content block as it streams in.
type block struct {
	kind      string // text, thinking, tool_use, or one this adapter skips
	text      strings.Builder
	signature string
	id, name  string
	args      strings.Builder
	input     any // tool_use input given whole at block start
}

// accumulator folds stream events into the message.
type accumulator struct {
	id, model   string
	blocks      []*block
	stopReason  anthropic.StopReason
	explanation string
	stopped     bool
	input       int64
	output      int64
	cacheRead   int64
	cacheWrite  int64
}

// maxBlocks bounds the block index a server may name, so a broken one cannot
// make the accumulator allocate without limit.
const maxBlocks = 4096

func (a *accumulator) block(i int64) *block {
	if i < 0 || i >= maxBlocks {
		return &block{}
	}
	for int64(len(a.blocks)) <= i {
		a.blocks = append(a.blocks, &block{})
	}
	return a.blocks[i]
}

func (a *accumulator) add(ev anthropic.MessageStreamEventUnion, sink func(ports.ModelDelta)) {
	switch ev.Type {
	case "message_start":
		a.id, a.model = ev.Message.ID, ev.Message.Model
		u := ev.Message.Usage
		a.input, a.output, a.cacheRead, a.cacheWrite = u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
	case "content_block_start":
		b := a.block(ev.Index)
		cb := ev.ContentBlock
		b.kind, b.id, b.name, b.signature, b.input = cb.Type, cb.ID, cb.Name, cb.Signature, cb.Input
		b.text.WriteString(cb.Text + cb.Thinking)
	case "content_block_delta":
		b := a.block(ev.Index)
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
			sink(ports.ModelDelta{Kind: ports.DeltaText, Text: d.Text})
		case "thinking_delta":
			b.text.WriteString(d.Thinking)
			sink(ports.ModelDelta{Kind: ports.DeltaReasoning, Text: d.Thinking})
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			if d.PartialJSON != "" {
				b.args.WriteString(d.PartialJSON)
				sink(ports.ModelDelta{Kind: ports.DeltaArguments, Text: d.PartialJSON, CallID: b.id, Name: b.name})
			}
		}
	case "message_delta":
		a.stopReason, a.explanation = ev.Delta.StopReason, ev.Delta.StopDetails.Explanation
		// message_delta usage is cumulative; input and cache figures appear
		// there only on some servers, so zero keeps message_start's
		u := ev.Usage
		a.output = u.OutputTokens
		if u.InputTokens > 0 {
			a.input = u.InputTokens
		}
		if u.CacheReadInputTokens > 0 {
			a.cacheRead = u.CacheReadInputTokens
		}
		if u.CacheCreationInputTokens > 0 {
			a.cacheWrite = u.CacheCreationInputTokens
		}
	case "message_stop":
		a.stopped = true
	}
}

// response lays the blocks out as internal items in order: a reasoning item
// per thinking block (its signature in encrypted_content), one message item
// per run of text blocks, a function_call per tool_use.
func (a *accumulator) response() ports.ModelResponse {
	out := ports.ModelResponse{ResponseID: a.id, Model: a.model}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out.Output = append(out.Output, domain.AssistantMessage("", text.String()))
			text.Reset()
		}
	}
	for i, b := range a.blocks {
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			flush()
			out.Output = append(out.Output, domain.Reasoning(fmt.Sprintf("%s%s_%d", thinkingPrefix, a.id, i), b.text.String(), "", b.signature))
		case "tool_use":
			flush()
			args := b.args.String()
			if args == "" {
				args = "{}"
				if raw, err := json.Marshal(b.input); err == nil && b.input != nil {
					args = string(raw)
				}
			}
			out.Output = append(out.Output, domain.FunctionCall("", b.id, b.name, args))
		}
	}
	flush()
	if a.stopReason == anthropic.StopReasonRefusal {
		out.Refusal = a.explanation
		if out.Refusal == "" {
			out.Refusal = "the model declined to answer"
		}
	}
	out.Usage = a.usage()
	return out
}

// usage is what the provider has counted so far.
func (a *accumulator) usage() domain.Usage {
	return domain.Usage{InputTokens: a.input, OutputTokens: a.output, CachedTokens: a.cacheRead,
		CacheWriteTokens: a.cacheWrite, TotalTokens: a.input + a.output}
}

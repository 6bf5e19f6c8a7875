// Package scripted is a deterministic model served over real HTTP. It speaks
// the OpenAI Responses, OpenAI Chat Completions and Anthropic Messages wire
// protocols (streaming and not) closely enough that the official SDKs parse
// it, so adapter tests and demos run the real client code without a provider.
//
// A Script per model name says what the model answers: the exchange is picked
// by the last user message, the step by how many assistant turns follow it,
// so a replayed request gets the same answer and a tool loop advances one
// step per round trip.
package scripted

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Script is everything one model name answers, as exchanges tried in order.
type Script struct {
	Exchanges []Exchange `json:"exchanges"`
	// RefuseImages makes the model answer a request whose last user
	// message carries an image as a vision-less model does: a 400.
	RefuseImages bool `json:"refuse_images,omitempty"`
}

// Exchange answers the requests whose last user message contains When (""
// matches any), one Step per model call of the turn.
type Exchange struct {
	When  string `json:"when,omitempty"`
	Steps []Step `json:"steps"`
	// Times, when set, lets the exchange answer only the first Times turns
	// it matches; later ones go to the next exchange that matches (a check
	// that fails once, then passes).
	Times int `json:"times,omitempty"`
}

// Step is one model call's answer: reasoning, then text, then tool calls, or
// a failure in the vendor's error shape.
type Step struct {
	// Reasoning streams as reasoning/thinking deltas before the text.
	Reasoning string `json:"reasoning,omitempty"`
	// Text is the assistant text.
	Text string `json:"text,omitempty"`
	// EchoInput makes Text "You said: " + the last user message text, and
	// a line naming its images ("[images: image/png 2x3 via input_image]").
	EchoInput bool `json:"echo_input,omitempty"`
	// ToolCalls are emitted after the text; the stop reason becomes the
	// vendor's tool-use reason.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage is reported as given; nil estimates it from sizes (chars/4).
	Usage *Usage `json:"usage,omitempty"`
	// ChunkSize is the characters per text/reasoning delta; 0 means 8.
	ChunkSize int `json:"chunk_size,omitempty"`
	// DelayMS pauses before each streamed delta.
	DelayMS int `json:"delay_ms,omitempty"`
	// StampDeltas (Responses protocol) sends, in place of each text
	// delta's chunk, the moment it is sent — Unix nanoseconds and a space —
	// so a client can measure how long a delta took to reach it.
	StampDeltas bool `json:"stamp_deltas,omitempty"`
	// FailTimes makes the first FailTimes requests reaching this step fail
	// with Error (a 500 when Error is nil); later ones answer normally.
	FailTimes int `json:"fail_times,omitempty"`
	// Error with FailTimes 0 fails every request reaching this step.
	Error *Failure `json:"error,omitempty"`
}

// ToolCall is a function call the model makes.
type ToolCall struct {
	Name string `json:"name"`
	// Arguments is JSON text; "" sends "{}". Each $NONCE in it becomes a
	// word no other call carries, so a test can tell one call's effects
	// from another's (a command run twice for one call, say).
	Arguments string `json:"arguments,omitempty"`
	// CallID "" becomes the deterministic "call_<exchange>_<step>_<i>".
	CallID string `json:"call_id,omitempty"`
}

// Usage is a step's reported token counts, each sent in the field its
// vendor reports it in.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CacheWriteTokens are input tokens written to the prompt cache
	// (Anthropic cache_creation_input_tokens, OpenAI cache_write_tokens).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens are the part of OutputTokens spent reasoning; OpenAI
	// reports them apart, Anthropic only inside output_tokens.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// Failure is an error answer in the vendor's error shape: an HTTP status and
// message, the vendor's context-overflow error when Overflow is set, or its
// overloaded error when Overloaded is (Overflow wins over both).
type Failure struct {
	Status  int    `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	// Overflow answers the vendor's context-window error (400).
	Overflow bool `json:"overflow,omitempty"`
	// Overloaded answers the vendor's overloaded error: Anthropic's 529
	// overloaded_error, OpenAI's 503.
	Overloaded bool `json:"overloaded,omitempty"`
	// MidStream, on a streamed request, answers 200 and streams the step's
	// reasoning, text and tool calls, then reports the failure as the
	// vendor's error event (Responses response.failed, a Chat Completions
	// {"error":…} chunk, a Messages error event) instead of finishing.
	MidStream bool `json:"mid_stream,omitempty"`
}

// conversation is what the selection reads from a request, whatever its
// protocol.
type conversation struct {
	model     string
	lastUser  string     // text of the last user message
	afterUser int        // assistant turns after that message: the step index
	inputSize int        // request body bytes, for usage estimates
	images    seenImages // the images of the last user message
}

// reply is a resolved step: what to send for one request.
type reply struct {
	reasoning string
	text      string
	toolCalls []ToolCall
	usage     Usage
	chunkSize int
	delayMS   int
	stamp     bool
	failure   *Failure
}

// echoScript answers any model without a script, so anyone can chat. It is
// built fresh each time so no caller can change another's copy.
func echoScript() Script { return Script{Exchanges: []Exchange{{Steps: []Step{{EchoInput: true}}}}} }

// resolve picks the exchange and step for a request and applies FailTimes.
func (s *Server) resolve(conv conversation) reply {
	s.mu.Lock()
	sc, ok := s.scripts[conv.model]
	s.mu.Unlock()
	if !ok {
		sc = echoScript()
	}
	if sc.RefuseImages && len(conv.images.images) > 0 {
		r := reply{chunkSize: 8}
		r.failure = &Failure{Status: 400, Message: fmt.Sprintf("model %s does not accept image input", conv.model)}
		return r
	}
	ex := s.pick(conv, sc)
	if ex < 0 {
		return textReply(fmt.Sprintf("[scripted: no exchange matches %q]", conv.lastUser), conv)
	}
	steps := sc.Exchanges[ex].Steps
	n := conv.afterUser
	if n >= len(steps) {
		return textReply(fmt.Sprintf("[scripted: exchange has no step %d]", n), conv)
	}
	st := steps[n]
	r := reply{reasoning: st.Reasoning, text: st.Text, chunkSize: st.ChunkSize, delayMS: st.DelayMS, stamp: st.StampDeltas}
	if st.EchoInput {
		r.text = "You said: " + conv.lastUser
		if seen := conv.images.String(); seen != "" {
			r.text += "\n\n" + seen
		}
	}
	if r.chunkSize <= 0 {
		r.chunkSize = 8
	}
	for i, tc := range st.ToolCalls {
		if tc.CallID == "" {
			tc.CallID = fmt.Sprintf("call_%d_%d_%d", ex, n, i)
		}
		if tc.Arguments == "" {
			tc.Arguments = "{}"
		}
		for strings.Contains(tc.Arguments, "$NONCE") {
			tc.Arguments = strings.Replace(tc.Arguments, "$NONCE", rand.Text(), 1)
		}
		r.toolCalls = append(r.toolCalls, tc)
	}
	if s.shouldFail(conv.model, ex, n, st) {
		f := Failure{Status: 500, Message: "scripted failure"}
		if st.Error != nil {
			f = *st.Error
		}
		r.failure = &f
	}
	r.usage = usageFor(st.Usage, conv, r)
	return r
}

// shouldFail counts the requests reaching a step, so FailTimes fails only the
// first ones; the count is per script, so replacing a script resets it.
func (s *Server) shouldFail(model string, ex, step int, st Step) bool {
	if st.FailTimes <= 0 {
		return st.Error != nil
	}
	key := failKey{model: model, exchange: ex, step: step}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failCounts[key]++
	return s.failCounts[key] <= st.FailTimes
}

// pick chooses the exchange answering a request: the first that matches
// and has turns left — counted at each turn's first call, whose choice the
// turn's later calls keep. A turn is known by its model and its user
// message, so two conversations on one model taking turns at once (a
// run and the background task it spawned) keep their own exchanges.
func (s *Server) pick(conv conversation, sc Script) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	turn := conv.model + "\x00" + conv.lastUser
	if conv.afterUser > 0 {
		if ex, ok := s.turnExchange[turn]; ok && ex < len(sc.Exchanges) && strings.Contains(conv.lastUser, sc.Exchanges[ex].When) {
			return ex
		}
	}
	for i, e := range sc.Exchanges {
		if !strings.Contains(conv.lastUser, e.When) {
			continue
		}
		key := failKey{model: conv.model, exchange: i, step: -1}
		if e.Times > 0 && conv.afterUser == 0 {
			if s.failCounts[key] >= e.Times {
				continue
			}
			s.failCounts[key]++
		}
		s.turnExchange[turn] = i
		return i
	}
	return -1
}

type failKey struct {
	model          string
	exchange, step int
}

func textReply(text string, conv conversation) reply {
	r := reply{text: text, chunkSize: 8}
	r.usage = usageFor(nil, conv, r)
	return r
}

// usageFor is the step's usage, or an estimate at about four characters a
// token so usage plumbing always has non-zero figures to carry.
func usageFor(u *Usage, conv conversation, r reply) Usage {
	if u != nil {
		return *u
	}
	out := len(r.reasoning) + len(r.text)
	for _, tc := range r.toolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	return Usage{InputTokens: max(conv.inputSize/4, 1), OutputTokens: max(out/4, 1)}
}

// chunks splits s into pieces of at most size runes, never inside a rune.
func chunks(s string, size int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// DefaultScripts are demo models for a person without a provider key: "echo"
// repeats the user, "think" reasons before echoing, "tool-demo" lists the
// project files with a tool and then answers, "slow-echo" streams visibly.
func DefaultScripts() map[string]Script {
	return map[string]Script{
		"echo": echoScript(),
		"think": {Exchanges: []Exchange{{Steps: []Step{{
			Reasoning: "The user wrote something; the scripted model repeats it.",
			EchoInput: true,
		}}}}},
		"slow-echo": {Exchanges: []Exchange{{Steps: []Step{{EchoInput: true, ChunkSize: 2, DelayMS: 40}}}}},
		"tool-demo": {Exchanges: []Exchange{{Steps: []Step{
			{
				Reasoning: "To answer I should look at the project's files first.",
				Text:      "Let me look at the project files.",
				ToolCalls: []ToolCall{{Name: "list_files", Arguments: `{"path":"."}`}},
			},
			{Text: "I listed the project files above. (This is the scripted demo model; its answers are canned.)"},
		}}}},
	}
}

package porttest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// LLM is a scripted ports.LLM. Each call records its request, then answers
// with the first Route whose match accepts the request or, failing that,
// the next queued Reply; with neither it fails as an invalid request, so a
// test that scripted too little sees the run fail rather than hang.
type LLM struct {
	mu       sync.Mutex
	queue    []Reply
	routes   []*route
	requests []ports.ModelRequest
	more     chan struct{} // closed and replaced when a request arrives
	items    int           // numbers the output items and responses
	open     int           // calls in Generate now
}

// Reply is one scripted answer. What is set streams in the order a
// provider's output comes — reasoning, message text, then each call's
// arguments — and makes the response's output items in that order. Err,
// when set, fails the call after that streaming (a dropped stream); Block
// and Hold keep the call open first.
type Reply struct {
	Reasoning string // a reasoning item's summary, streamed as one reasoning delta
	Text      string // an assistant message, streamed word by word
	Calls     []Call // function calls
	Usage     domain.Usage
	Refusal   string
	Model     string // the model that answered; "" is the requested one
	// Err fails the call: a *ports.ModelError (see Fail) or any error. A
	// ModelError without a provider gets the endpoint's name.
	Err error
	// Block keeps the call open until its context ends, then returns the
	// context's error: a model that never answers.
	Block bool
	// Hold, when set, keeps the call open until it is closed (then the
	// reply is given) or the context ends.
	Hold <-chan struct{}
}

// Call is a function call a Reply makes.
type Call struct {
	ID        string // the call id; "" numbers one
	Name      string
	Arguments string // JSON text; "" is {}
}

// Fail is a Reply failing with a ModelError of kind, with the HTTP status
// a provider would send for it.
func Fail(kind ports.ModelErrorKind, message string) Reply {
	status := map[ports.ModelErrorKind]int{ports.ModelAuth: 401, ports.ModelRateLimited: 429, ports.ModelUnavailable: 503,
		ports.ModelOverflow: 400, ports.ModelInvalid: 400}[kind]
	return Reply{Err: &ports.ModelError{Kind: kind, Status: status, Message: message}}
}

// route answers the calls match accepts with its replies in turn, the last
// one again and again.
type route struct {
	match   func(ports.ModelRequest) bool
	replies []Reply
}

// Queue appends replies to the script the unrouted calls take in order.
func (m *LLM) Queue(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = append(m.queue, replies...)
}

// Route answers every call match accepts with replies in turn (the last
// repeating), ahead of the queue — for calls that come at no fixed point,
// such as a session's title, or for one model of several.
func (m *LLM) Route(match func(ports.ModelRequest) bool, replies ...Reply) {
	if len(replies) == 0 {
		panic("porttest: a route needs a reply")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routes = append(m.routes, &route{match: match, replies: replies})
}

// ForModel is a Route match taking the calls of one model.
func ForModel(model string) func(ports.ModelRequest) bool {
	return func(r ports.ModelRequest) bool { return r.Model == model }
}

// Requests returns every request received so far, in arrival order.
func (m *LLM) Requests() []ports.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Open returns how many calls are in progress now: a test that expects
// every call of a run to have let go asserts it is 0.
func (m *LLM) Open() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open
}

// Unused returns how many queued replies no call has taken.
func (m *LLM) Unused() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}

// Await waits until n requests that match accepts (nil: any) have arrived
// and returns them, or returns ctx's error — so a test can act while a call
// is open instead of sleeping.
func (m *LLM) Await(ctx context.Context, n int, match func(ports.ModelRequest) bool) ([]ports.ModelRequest, error) {
	for {
		m.mu.Lock()
		var got []ports.ModelRequest
		for _, r := range m.requests {
			if match == nil || match(r) {
				got = append(got, r)
			}
		}
		if m.more == nil {
			m.more = make(chan struct{})
		}
		more := m.more
		m.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-more:
		case <-ctx.Done():
			return got, fmt.Errorf("%d of %d model requests arrived: %w", len(got), n, ctx.Err())
		}
	}
}

// Generate records req, streams the chosen reply to sink (nil: none) and
// returns it.
func (m *LLM) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	rep, ok, n := m.take(req)
	defer func() {
		m.mu.Lock()
		m.open--
		m.mu.Unlock()
	}()
	if err := ctx.Err(); err != nil {
		return ports.ModelResponse{}, err
	}
	if !ok {
		return ports.ModelResponse{}, &ports.ModelError{Kind: ports.ModelInvalid, Provider: req.Endpoint.Name, Status: 400,
			Message: fmt.Sprintf("porttest: no scripted reply for call %d (model %s)", n, req.Model)}
	}
	if rep.Block {
		<-ctx.Done()
		return ports.ModelResponse{}, ctx.Err()
	}
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-ctx.Done():
			return ports.ModelResponse{}, ctx.Err()
		}
	}
	if sink == nil {
		sink = func(ports.ModelDelta) {}
	}
	resp := ports.ModelResponse{Usage: rep.Usage, Refusal: rep.Refusal, Model: cmp.Or(rep.Model, req.Model), ResponseID: fmt.Sprintf("resp_%d", n)}
	if rep.Reasoning != "" {
		sink(ports.ModelDelta{Kind: ports.DeltaReasoning, Text: rep.Reasoning})
		resp.Output = append(resp.Output, domain.Reasoning(fmt.Sprintf("rs_%d", n), rep.Reasoning, "", ""))
	}
	if rep.Text != "" {
		for _, word := range strings.SplitAfter(rep.Text, " ") {
			sink(ports.ModelDelta{Kind: ports.DeltaText, Text: word})
		}
		resp.Output = append(resp.Output, domain.AssistantMessage(fmt.Sprintf("msg_%d", n), rep.Text))
	}
	for i, c := range rep.Calls {
		id, args := cmp.Or(c.ID, fmt.Sprintf("call_%d_%d", n, i+1)), cmp.Or(c.Arguments, "{}")
		sink(ports.ModelDelta{Kind: ports.DeltaArguments, Text: args, CallID: id, Name: c.Name})
		resp.Output = append(resp.Output, domain.FunctionCall(fmt.Sprintf("fc_%d_%d", n, i+1), id, c.Name, args))
	}
	if rep.Err != nil {
		var me *ports.ModelError
		if errors.As(rep.Err, &me) && me.Provider == "" {
			named := *me
			named.Provider = req.Endpoint.Name
			return ports.ModelResponse{}, &named
		}
		return ports.ModelResponse{}, rep.Err
	}
	if ctx.Err() != nil {
		return ports.ModelResponse{}, ctx.Err()
	}
	return resp, nil
}

// take records req and picks its reply: ok false when none is scripted; n
// numbers the call.
func (m *LLM) take(req ports.ModelRequest) (rep Reply, ok bool, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	req.Input, req.Tools = slices.Clone(req.Input), slices.Clone(req.Tools)
	m.requests = append(m.requests, req)
	if m.more != nil {
		close(m.more)
	}
	m.more = make(chan struct{})
	m.items++
	m.open++
	n = m.items
	for _, r := range m.routes {
		if r.match(req) {
			rep = r.replies[0]
			if len(r.replies) > 1 {
				r.replies = r.replies[1:]
			}
			return rep, true, n
		}
	}
	if len(m.queue) == 0 {
		return Reply{}, false, n
	}
	rep, m.queue = m.queue[0], m.queue[1:]
	return rep, true, n
}

// InputText is the text of a request's input items, one per line — the
// user's words, the model's answers and the tool outputs — for asserting
// on what a model was sent.
func InputText(req ports.ModelRequest) string {
	var b strings.Builder
	for _, raw := range req.Input {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case "message":
			b.WriteString(it.Text())
		case "function_call_output":
			b.WriteString(it.OutputText())
		case "function_call":
			b.WriteString(it.Name + " " + it.Arguments)
		default:
			b.WriteString(it.Kind())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var _ ports.LLM = (*LLM)(nil)

// Models implements ports.LLM: one model, "fake", named by the endpoint.
func (m *LLM) Models(_ context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	return []ports.ModelInfo{{ID: "fake", DisplayName: "Fake model of " + ep.Name}}, nil
}

package scripted

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Protocol names as Recorded.API reports them.
const (
	APIResponses       = "responses"
	APIChatCompletions = "chat_completions"
	APIMessages        = "messages"
)

// maxBody bounds a request body; real providers refuse far less.
const maxBody = 32 << 20

// Options configure a Server.
type Options struct {
	// APIKey "" accepts any key; otherwise a wrong or missing key is a 401 in
	// the vendor's shape (Authorization: Bearer for OpenAI, x-api-key for
	// Anthropic).
	APIKey string
}

// Recorded is one request as the server received it.
type Recorded struct {
	API   string          // responses, chat_completions or messages
	Model string          // the request's model name
	Body  json.RawMessage // the request body as received
	// Header is the request's headers as received: tests check what a
	// provider request carries (and what it must not).
	Header http.Header
}

// Server is the scripted model: scripts by model name, the request log and
// the FailTimes counters. It is safe for concurrent use.
type Server struct {
	opts       Options
	mu         sync.Mutex
	scripts    map[string]Script
	failCounts map[failKey]int
	// turnExchange is the exchange each turn (model and user message)
	// started on.
	turnExchange map[string]int
	requests     []Recorded
	ids          atomic.Int64 // numbers responses, so ids differ between calls
}

// New returns a server with no scripts: every model echoes until SetScript.
func New(opts Options) *Server {
	return &Server{opts: opts, scripts: map[string]Script{}, failCounts: map[failKey]int{}, turnExchange: map[string]int{}}
}

// SetScript makes requests naming model answer from sc, and restarts that
// model's FailTimes counts.
func (s *Server) SetScript(model string, sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[model] = sc
	for k := range s.failCounts {
		if k.model == model {
			delete(s.failCounts, k)
		}
	}
}

// Requests returns a copy of every request received, in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// Handler serves POST /v1/responses, /v1/chat/completions and /v1/messages
// and GET /v1/models. Point the OpenAI SDK at the server's URL + "/v1" and
// the Anthropic SDK at the server's URL (it appends /v1/messages itself).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/messages", s.handleMessages)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	return mux
}

func (s *Server) nextID() int { return int(s.ids.Add(1)) }

// readRequest reads and records the body, checks the key and decodes the
// body into dst; on failure it has already answered in the vendor's shape.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, api string, dst any) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeFailure(w, api, Failure{Status: http.StatusBadRequest, Message: "could not read the request body"})
		return nil, false
	}
	var head struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &head) // a malformed body is refused below, after recording
	s.mu.Lock()
	s.requests = append(s.requests, Recorded{API: api, Model: head.Model, Body: json.RawMessage(body), Header: r.Header.Clone()})
	s.mu.Unlock()
	if !s.authorized(r, api) {
		writeFailure(w, api, Failure{Status: http.StatusUnauthorized})
		return nil, false
	}
	if err := json.Unmarshal(body, dst); err != nil {
		writeFailure(w, api, Failure{Status: http.StatusBadRequest, Message: "invalid JSON body: " + err.Error()})
		return nil, false
	}
	return body, true
}

// authorized checks the key where the vendor's SDK sends it.
func (s *Server) authorized(r *http.Request, api string) bool {
	if s.opts.APIKey == "" {
		return true
	}
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch api {
	case APIMessages:
		return r.Header.Get("X-Api-Key") == s.opts.APIKey
	case "models":
		return bearer == s.opts.APIKey || r.Header.Get("X-Api-Key") == s.opts.APIKey
	default:
		return bearer == s.opts.APIKey
	}
}

// handleModels lists the scripted models in a shape both SDKs parse: OpenAI's
// {object, data[{id, object, created, owned_by}]} and Anthropic's
// {data[{type, id, display_name, created_at}], has_more, first_id, last_id}.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r, "models") {
		writeFailure(w, APIResponses, Failure{Status: http.StatusUnauthorized})
		return
	}
	s.mu.Lock()
	names := []string{"echo"}
	for name := range s.scripts {
		if name != "echo" {
			names = append(names, name)
		}
	}
	s.mu.Unlock()
	sort.Strings(names[1:])
	data := make([]map[string]any, 0, len(names))
	for _, n := range names {
		data = append(data, map[string]any{
			"id": n, "object": "model", "created": 0, "owned_by": "scripted",
			"type": "model", "display_name": n, "created_at": "1970-01-01T00:00:00Z",
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "has_more": false, "first_id": names[0], "last_id": names[len(names)-1],
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client going away is not the server's problem
}

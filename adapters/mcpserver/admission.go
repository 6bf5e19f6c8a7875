package mcpserver

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
)

// Budget is the server's per-address rate budgets, shared with the REST
// API and the WebSockets, so /mcp is neither a faster way to guess a token
// nor a way around the request budget.
type Budget interface {
	// RequestRefused spends one request of r's address (read class for
	// GET, write class otherwise) and says how long to wait when the
	// budget is empty; 0 lets it go on.
	RequestRefused(r *http.Request) time.Duration
	// AuthRefused is how long r's address must wait before trying a
	// credential again; 0 lets it try.
	AuthRefused(r *http.Request) time.Duration
	// SpendAuthFailure records one failed authentication from r's address.
	SpendAuthFailure(r *http.Request)
}

// admit puts next behind the address's request budget, the
// mcp_server_enabled setting and, for a request carrying a credential, the
// failed sign-in budget: while that is spent, no token from the address is
// even looked at.
func (s *server) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b := s.d.Budget; b != nil {
			if wait := b.RequestRefused(r); wait > 0 {
				refuse(w, wait, "too many requests from this address")
				return
			}
		}
		if on, err := s.d.Settings.Bool(r.Context(), settings.KeyMCPServerEnabled); err == nil && !on {
			http.Error(w, "the workbench's MCP server is off (the mcp_server_enabled setting)", http.StatusNotFound)
			return
		}
		if b := s.d.Budget; b != nil && strings.TrimSpace(r.Header.Get("Authorization")) != "" {
			if wait := b.AuthRefused(r); wait > 0 {
				refuse(w, wait, "too many failed sign-in attempts from this address")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers 429 rate_limited with Retry-After (whole seconds, at
// least one) and the API's error envelope.
func refuse(w http.ResponseWriter, wait time.Duration, what string) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeEnvelope(w, http.StatusTooManyRequests, errs.RateLimited, what+"; retry in "+strconv.Itoa(secs)+" s")
}

// writeEnvelope writes the API's error envelope, {"error":{code,message}}.
func writeEnvelope(w http.ResponseWriter, status int, code errs.Code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": string(code), "message": message}})
	_, _ = w.Write(body)
}

package ws

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
)

// AuthBudget is the server's failed-authentication budget per client
// address, shared with the REST API so a token cannot be guessed faster
// over a WebSocket than over HTTP.
type AuthBudget interface {
	// AuthRefused is how long r's address must wait before trying a
	// credential again; 0 lets it try.
	AuthRefused(r *http.Request) time.Duration
	// SpendAuthFailure records one failed authentication from r's address.
	SpendAuthFailure(r *http.Request)
}

// signIn is the first-message authentication both endpoints start with,
// and the registration of the signed-in socket as one of its user's
// streams.
type signIn struct {
	auth    *auth.Service
	budget  AuthBudget // nil: no budget
	streams *livestreams.Registry
}

// admit answers 429 with Retry-After, before any upgrade, when the address
// has spent its failed-authentication budget. Reports whether to go on.
func (s signIn) admit(w http.ResponseWriter, r *http.Request) bool {
	if s.budget == nil {
		return true
	}
	wait := s.budget.AuthRefused(r)
	if wait <= 0 {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "rate_limited",
		"message": "too many failed sign-in attempts from this address; retry in " + strconv.Itoa(secs) + " s"}})
	_, _ = w.Write(body)
	return false
}

// first reads the auth message, {"type":"auth","token":…} (the token never
// rides the URL, where logs and histories would keep it). It returns an
// error code and message when the caller did not authenticate; a wrong
// token spends the address's budget.
func (s signIn) first(ctx context.Context, ws *websocket.Conn, r *http.Request) (string, domain.Principal, string, string) {
	ws.SetReadDeadline(time.Now().Add(authDeadline))
	_, data, err := ws.ReadMessage()
	if err != nil {
		return "", domain.Principal{}, "unauthorized", "no auth message"
	}
	var msg struct {
		Type  string `json:"type"`
		Token string `json:"token"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Type != "auth" {
		return "", domain.Principal{}, "unauthorized", "the first message must be {\"type\":\"auth\",\"token\":…}"
	}
	// No token: the program embedding the workbench may have signed the
	// upgrade request in (its cookies came with it; the upgrader refuses
	// another origin's page), and ctx carries the request's values.
	p, err := s.auth.AuthenticateRequest(ctx, msg.Token)
	switch {
	case errs.Is(err, errs.Unauthorized) && msg.Token == "":
		return "", domain.Principal{}, "unauthorized", errs.MessageOf(err)
	case errs.Is(err, errs.Unauthorized):
		if s.budget != nil {
			s.budget.SpendAuthFailure(r)
		}
		return "", domain.Principal{}, "unauthorized", "invalid or expired token"
	case err != nil:
		// The store did not answer: not the caller's guess, and not a verdict
		// on the token either.
		return "", domain.Principal{}, string(errs.CodeOf(err)), errs.MessageOf(err)
	}
	return msg.Token, p, "", ""
}

// refusal is how a signed-in socket the stream register refused is
// answered: an error frame with code and message, then a close frame.
type refusal struct {
	code, message string
	closeCode     int
	closeReason   string // short: a close frame carries at most 123 bytes
}

// register counts the signed-in socket against its user's
// max_streams_per_user and ties it to the credential: close ends it with a
// reason when the credential stops being valid. A refusal closes 1013 (try
// again later) for the cap, a demotion in between or a store that cannot
// answer; 1008 for a token revoked in between; 1011 for an internal error.
func (s signIn) register(ctx context.Context, p domain.Principal, close func(reason string)) (*livestreams.Stream, *refusal) {
	st, err := s.streams.Open(ctx, p, close)
	if err == nil {
		return st, nil
	}
	r := &refusal{code: string(errs.CodeOf(err)), message: errs.MessageOf(err),
		closeCode: websocket.CloseTryAgainLater, closeReason: "try again later"}
	switch errs.CodeOf(err) {
	case errs.RateLimited:
		r.closeReason = "too many open streams"
	case errs.Unauthorized:
		r.closeCode, r.closeReason = websocket.ClosePolicyViolation, "invalid or expired token"
	case errs.Internal:
		r.closeCode, r.closeReason = websocket.CloseInternalServerErr, "internal error"
	}
	return nil, r
}

package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// ErrorEnvelope is the body of every non-2xx response.
type ErrorEnvelope struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries the stable code, a human message, and for validation
// errors the offending fields.
type ErrorDetail struct {
	Code    string            `json:"code" enum:"error_code" doc:"Stable, machine-readable error code"`
	Message string            `json:"message" doc:"Human-readable detail"`
	Fields  map[string]string `json:"fields,omitempty" doc:"For validation errors: the offending request fields and what is wrong with each"`
}

// StatusOf maps a code to its HTTP status, per the wire table.
func StatusOf(code errs.Code) int {
	switch code {
	case errs.Validation:
		return http.StatusBadRequest
	case errs.Unauthorized:
		return http.StatusUnauthorized
	case errs.Forbidden:
		return http.StatusForbidden
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Conflict:
		return http.StatusConflict
	case errs.Upstream:
		return http.StatusBadGateway
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	case errs.RateLimited, errs.BudgetExceeded:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// errorHandler is the ONE place a failed request becomes a response: the
// status from the code, the envelope, and for internal errors a log line
// with the detail the client never sees.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, detail := envelopeOf(err)
		if detail.Code == string(errs.Internal) {
			log.Error("internal error", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		}
		if werr := writeEnvelope(c.Response(), c.Request().Method == http.MethodHead, status, detail); werr != nil {
			log.Debug("writing error response failed", "err", werr)
		}
	}
}

// statusError is a coded error that must go out with a status other than
// its code's usual one (413 for a declared oversize body, 405).
type statusError struct {
	status int
	err    *errs.Error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func withStatus(status int, err *errs.Error) error { return &statusError{status: status, err: err} }

func envelopeOf(err error) (int, ErrorDetail) {
	var se *statusError
	if errors.As(err, &se) {
		return se.status, ErrorDetail{Code: string(se.err.Code), Message: errs.MessageOf(se.err), Fields: se.err.Fields}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return he.Code, ErrorDetail{Code: string(errs.NotFound), Message: "no such route"}
		case http.StatusMethodNotAllowed:
			return he.Code, ErrorDetail{Code: string(errs.Validation), Message: "method not allowed on this route"}
		case http.StatusRequestEntityTooLarge:
			return he.Code, ErrorDetail{Code: string(errs.Validation), Message: "request body too large"}
		}
		if he.Code >= 400 && he.Code < 500 {
			return he.Code, ErrorDetail{Code: string(errs.Validation), Message: fmt.Sprint(he.Message)}
		}
		return http.StatusInternalServerError, ErrorDetail{Code: string(errs.Internal), Message: errs.MessageOf(err)}
	}
	code := errs.CodeOf(err)
	return StatusOf(code), ErrorDetail{Code: string(code), Message: errs.MessageOf(err), Fields: errs.FieldsOf(err)}
}

// WriteError answers err as the API answers every failure: the status of
// its code and the envelope. It is for handlers in front of the API (a
// host's mount) that refuse a request before it reaches a route.
func WriteError(w http.ResponseWriter, err error) {
	status, detail := envelopeOf(err)
	_ = writeEnvelope(w, false, status, detail)
}

// writeEnvelope writes a refusal: the status, the bearer challenge on a
// 401, Retry-After on every 429, and the envelope (no body for HEAD).
func writeEnvelope(w http.ResponseWriter, head bool, status int, detail ErrorDetail) error {
	if detail.Code == string(errs.Unauthorized) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agents-server"`)
	}
	if status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		// A rate budget sets its own wait; a per-user cap (live runs)
		// cannot know when a slot frees, and says to come back soon.
		w.Header().Set("Retry-After", strconv.Itoa(int(domain.CapRetryAfter/time.Second)))
	}
	if head {
		w.WriteHeader(status)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(ErrorEnvelope{Error: detail})
}

// Package errs is the one error type every layer of agents-server speaks.
//
// Core returns *Error values carrying a Code from the wire table; adapters
// translate their own failures into these codes at their edge, and the HTTP and
// WebSocket edges turn the code into a status and an envelope. It imports
// nothing of the project, so everything may import it.
package errs

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code is a stable, machine-readable error identifier from the wire table.
type Code string

// The nine codes of the wire surface's error table.
const (
	// Validation: malformed request body or invalid parameter (400).
	Validation Code = "validation"
	// Unauthorized: missing or invalid bearer token (401).
	Unauthorized Code = "unauthorized"
	// Forbidden: refused for who the caller is (403).
	Forbidden Code = "forbidden"
	// NotFound: no such resource (404).
	NotFound Code = "not_found"
	// Conflict: the resource is in the wrong state for the request (409).
	Conflict Code = "conflict"
	// Upstream: a failing upstream dependency (502).
	Upstream Code = "upstream"
	// Internal: unexpected server error; the detail is logged, never returned (500).
	Internal Code = "internal"
	// Unavailable: transient refusal, e.g. while the server drains (503).
	Unavailable Code = "unavailable"
	// RateLimited: the client exceeded an endpoint's rate budget (429).
	RateLimited Code = "rate_limited"
	// BudgetExceeded: a usage budget that applies to the call is used up
	// until its period resets (429).
	BudgetExceeded Code = "budget_exceeded"
)

// Values lists the codes.
func (Code) Values() []string {
	return []string{string(Validation), string(Unauthorized), string(Forbidden), string(NotFound), string(Conflict),
		string(Upstream), string(Internal), string(Unavailable), string(RateLimited), string(BudgetExceeded)}
}

// Codes lists every code, in the wire table's order.
var Codes = []Code{Validation, Unauthorized, Forbidden, NotFound, Conflict, Upstream, Internal, Unavailable, RateLimited, BudgetExceeded}

// Error is a coded error. Message is safe to show to a client (except for
// Internal, whose message is replaced at the edge); Fields names offending
// request fields for Validation; Err is the wrapped cause, for logs only.
type Error struct {
	Code    Code
	Message string
	Fields  map[string]string
	Err     error
}

// Error renders the code, message and cause for logs.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Code))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " [%s: %s]", k, e.Fields[k])
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// E builds a coded error with a formatted message.
func E(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds a coded error that keeps err as its (log-only) cause.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// Field builds a Validation error naming one offending field.
func Field(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: Validation, Message: field + ": " + msg, Fields: map[string]string{field: msg}}
}

// CodeOf returns the code of the first *Error in err's chain, Internal for any
// other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the client-safe message of err: the *Error's message, or a
// generic text for Internal errors, whose detail must never leave the process.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		if e.Message != "" {
			return e.Message
		}
		return string(e.Code)
	}
	return "internal server error"
}

// FieldsOf returns the offending fields of a Validation error, or nil.
func FieldsOf(err error) map[string]string {
	var e *Error
	if errors.As(err, &e) && e.Code == Validation {
		return e.Fields
	}
	return nil
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// FieldErrors collects every offending field of a request, so a form can
// mark them all at once instead of one per round trip.
type FieldErrors struct {
	first  string
	fields map[string]string
}

// Add records a problem with field; the first one added leads the message.
func (f *FieldErrors) Add(field, format string, args ...any) {
	if f.fields == nil {
		f.fields = map[string]string{}
	}
	if _, dup := f.fields[field]; dup {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if f.first == "" {
		f.first = field + ": " + msg
	}
	f.fields[field] = msg
}

// Merge adds the fields of a validation error (prefixed), or returns err
// when it is not one, so callers can stop on a real failure.
func (f *FieldErrors) Merge(prefix string, err error) error {
	if err == nil {
		return nil
	}
	fields := FieldsOf(err)
	if fields == nil {
		return err
	}
	for k, v := range fields {
		f.Add(prefix+k, "%s", v)
	}
	return nil
}

// Err returns the collected Validation error, or nil when nothing was added.
func (f *FieldErrors) Err() error {
	if len(f.fields) == 0 {
		return nil
	}
	msg := f.first
	if n := len(f.fields); n > 1 {
		msg += fmt.Sprintf(" (and %d more)", n-1)
	}
	return &Error{Code: Validation, Message: msg, Fields: f.fields}
}

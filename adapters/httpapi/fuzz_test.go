package httpapi

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

// FuzzDecodeBody feeds bytes to the body decoder of every route in the
// table that takes one: each answer is the decoded body or a validation
// error, never a panic or another code.
func FuzzDecodeBody(f *testing.F) {
	var routes []Route
	for _, r := range testServer(f).Routes() {
		if r.Request != nil && r.Request != reflect.TypeFor[NoBody]() {
			routes = append(routes, r)
		}
	}
	if len(routes) < 40 {
		f.Fatalf("only %d routes take a body", len(routes))
	}
	for i, seed := range []string{`{}`, `{"name":"x"}`, `{"name":"x","id":"read-only","extra":1}`, `[]`, `null`, `{"a":`, "",
		`{"config":{"headers":{"X":null}}}`, `{"input":"hi","attachment_ids":["a",1]}`, `{"steps":[{"name":"s","agent_id":"a"}]}`,
		`{"value":"` + string(bytes.Repeat([]byte("a"), 300)) + `"}`, "\xff\xfe"} {
		f.Add(uint(i*7), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint, body []byte) {
		r := routes[which%uint(len(routes))]
		dst := reflect.New(r.Request).Interface()
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		if err := decodeBody(req, dst, r.Request, r.Response, r.OptionalBody); err != nil && errs.CodeOf(err) != errs.Validation {
			t.Fatalf("%s %s: %q answered %v (%s), want validation", r.Method, r.Path, body, err, errs.CodeOf(err))
		}
	})
}

// FuzzSSECursor: a resume cursor from Last-Event-ID or from_seq is a
// sequence number ≥ 0 that the header or query spelled, or a validation
// error naming where it came from.
func FuzzSSECursor(f *testing.F) {
	for _, s := range []string{"", "0", "12", "-1", "1e3", "9223372036854775807", "9223372036854775808", " 5", "0x10", "٣"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, header, query string) {
		req := httptest.NewRequest("GET", "/?from_seq="+url.QueryEscape(query), nil)
		if header != "" {
			req.Header["Last-Event-Id"] = []string{header}
		}
		n, err := sseCursor(req)
		raw, field := req.Header.Get("Last-Event-ID"), "Last-Event-ID"
		if raw == "" {
			raw, field = query, "from_seq"
		}
		if err != nil {
			if errs.CodeOf(err) != errs.Validation || errs.FieldsOf(err)[field] == "" {
				t.Fatalf("%q: %v, want validation naming %s", raw, err, field)
			}
			return
		}
		if n < 0 || (raw != "" && strconv.FormatInt(n, 10) != trimPlus(raw)) || (raw == "" && n != 0) {
			t.Fatalf("%q read as %d", raw, n)
		}
	})
}

// trimPlus is raw as ParseInt reads it: a leading + and zeros dropped.
func trimPlus(raw string) string {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return raw
	}
	return strconv.FormatInt(n, 10)
}

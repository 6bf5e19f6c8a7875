package httpapi

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

type decodeReq struct {
	Name   string            `json:"name"`
	Count  int               `json:"count,omitempty"`
	Nested *struct{ A int }  `json:"nested,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
	Steps  []decodeStep      `json:"steps,omitempty"`
}

type decodeStep struct {
	Prompt string `json:"prompt"`
}

type decodeResp struct {
	ID string `json:"id"`
	decodeReq
	Status string `json:"status"`
}

func decode(body string) (decodeReq, error) {
	return decodeTyped(body, "application/json")
}

func decodeTyped(body, contentType string) (decodeReq, error) {
	var out decodeReq
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	err := decodeBody(r, &out, reflect.TypeFor[decodeReq](), reflect.TypeFor[decodeResp](), false)
	return out, err
}

func TestDecodeBody(t *testing.T) {
	got, err := decode(`{"name":"x","count":2,"id":"ignored","status":"ignored"}`)
	if err != nil || got.Name != "x" || got.Count != 2 {
		t.Fatalf("read-only fields: %+v %v", got, err)
	}
	bad := map[string]string{
		`{"name":"x","extra":1}`:        "extra",
		`{"name":"x","nested":{"B":1}}`: "B",
		`{"name":1}`:                    "name",
		`{"count":"two"}`:               "count",
	}
	for body, field := range bad {
		_, err := decode(body)
		if errs.CodeOf(err) != errs.Validation || errs.FieldsOf(err)[field] == "" {
			t.Errorf("%s → %v, want a validation error on %s", body, err, field)
		}
	}
	for _, body := range []string{``, `null`, `[]`, `"s"`, `{`, `{} {}`} {
		if _, err := decode(body); errs.CodeOf(err) != errs.Validation {
			t.Errorf("%q → %v, want validation", body, err)
		}
	}
}

// A JSON body must say it is JSON: application/json or a +json type, in
// UTF-8; anything else (a form, text/plain, none) is a 415 validation.
func TestDecodeBodyWantsJSONContentType(t *testing.T) {
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; charset=UTF-8",
		"application/merge-patch+json", "application/vnd.api+json"} {
		if got, err := decodeTyped(`{"name":"x"}`, ct); err != nil || got.Name != "x" {
			t.Errorf("%q: %+v %v", ct, got, err)
		}
	}
	for _, ct := range []string{"", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "application/json; charset=latin1", "text/json", "application/jsonx", "garbage;;"} {
		_, err := decodeTyped(`{"name":"x"}`, ct)
		status, detail := envelopeOf(err)
		if status != http.StatusUnsupportedMediaType || detail.Code != string(errs.Validation) ||
			!strings.Contains(detail.Message, "application/json") {
			t.Errorf("%q → %d %+v, want 415 validation naming application/json", ct, status, detail)
		}
	}
	// An empty body on a route whose body is optional needs no type.
	r := httptest.NewRequest("POST", "/", strings.NewReader(""))
	if err := decodeBody(r, &decodeReq{}, reflect.TypeFor[decodeReq](), nil, true); err != nil {
		t.Errorf("an absent optional body: %v", err)
	}
}

// A NUL character (\u0000) in any string or key is refused naming where it
// sits, as the client wrote it: Postgres refuses one in text, SQLite keeps
// it, so neither gets one.
func TestDecodeBodyRefusesNUL(t *testing.T) {
	for body, fields := range map[string][]string{
		`{"name":"a\u0000b"}`: {"name"},
		`{"name":"x","steps":[{"prompt":"ok"},{"prompt":"\u0000"}]}`: {"steps[1].prompt"},
		`{"tags":{"k":"v\u0000"}}`:                                   {"tags.k"},
		`{"tags":{"k\u0000":"v"}}`:                                   {"tags"},
		`{"name":"\u0000","tags":{"a":"\u0000"}}`:                    {"name", "tags.a"},
		`{"id":"\u0000","name":"x"}`:                                 {"id"}, // read-only, but refused all the same
	} {
		_, err := decode(body)
		got := errs.FieldsOf(err)
		if errs.CodeOf(err) != errs.Validation || len(got) != len(fields) {
			t.Errorf("%s → %v, want validation on %v", body, err, fields)
			continue
		}
		for _, f := range fields {
			if !strings.Contains(got[f], "NUL") {
				t.Errorf("%s → %v, want %s named", body, got, f)
			}
		}
	}
	// Escapes that are not a NUL pass: an escaped backslash before u0000,
	// and other control characters.
	for _, body := range []string{`{"name":"\\u0000"}`, `{"name":"\u0001\t"}`} {
		if _, err := decode(body); err != nil {
			t.Errorf("%s → %v", body, err)
		}
	}
}

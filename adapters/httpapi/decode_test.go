package httpapi

import (
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
}

type decodeResp struct {
	ID string `json:"id"`
	decodeReq
	Status string `json:"status"`
}

func decode(body string) (decodeReq, error) {
	var out decodeReq
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
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

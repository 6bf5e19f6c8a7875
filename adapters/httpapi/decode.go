package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// DefaultBodyLimit caps request bodies, matching the WebSocket frame limit.
const DefaultBodyLimit = 1 << 20

// bodyReadError says why a request body could not be read: cut at the
// cap, too slow, or broken off. Returns validation.
func bodyReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errs.E(errs.Validation, "request body exceeds the %s limit", humanBytes(tooBig.Limit))
	}
	if errors.Is(err, errBodyTimeout) {
		return errs.Wrap(errs.Validation, err, "the request body did not arrive in time; the connection is closed")
	}
	return errs.Wrap(errs.Validation, err, "could not read the request body")
}

// decodeBody reads a JSON object into dst strictly: a body not labelled
// JSON is a 415; a string holding a NUL character is a 400 naming its
// field (no store keeps one alike, see domain.CheckJSONNoNUL); a field the
// request type does not know is a 400 naming it — except fields only the
// response carries (id, timestamps, derived state), which are dropped, so a
// client may send back the whole object it read. Nested objects are strict
// too. Returns validation.
func decodeBody(r *http.Request, dst any, reqType, respType reflect.Type, optional bool) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyReadError(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if optional {
			return nil
		}
		return errs.E(errs.Validation, "a JSON request body is required")
	}
	if err := requireJSONType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return errs.E(errs.Validation, "the request body must be a JSON object")
	}
	if err := domain.CheckJSONNoNUL(data); err != nil {
		return err
	}
	accepted, readOnly := jsonFields(reqType), jsonFields(respType)
	var unknown []string
	for k := range top {
		switch {
		case accepted[k]:
		case readOnly[k]:
			delete(top, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		e := errs.E(errs.Validation, "unknown field %q", unknown[0])
		e.Fields = map[string]string{}
		for _, k := range unknown {
			e.Fields[k] = "unknown field"
		}
		return e
	}
	kept, err := json.Marshal(top)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "re-encode body")
	}
	dec := json.NewDecoder(bytes.NewReader(kept))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	return nil
}

// requireJSONType refuses a body whose Content-Type is not JSON
// (application/json or an application/*+json type, in UTF-8) with 415: a
// form or a text/plain body — what a page on another origin may send
// without asking — never reaches a JSON route. Returns validation.
func requireJSONType(header string) error {
	mt, params, err := mime.ParseMediaType(header)
	isJSON := err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
	if cs, ok := params["charset"]; isJSON && (!ok || strings.EqualFold(cs, "utf-8")) {
		return nil
	}
	got := "no Content-Type"
	if header != "" {
		got = "Content-Type " + strconv.Quote(domain.TruncateRunes(header, 100))
	}
	return withStatus(http.StatusUnsupportedMediaType,
		errs.E(errs.Validation, "the request body must be JSON: send Content-Type: application/json (this request has %s)", got))
}

// decodeError turns encoding/json's complaints into field-level validation.
func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		// The path names embedded Go structs too (AgentSpec.tools); the
		// client only knows the JSON names.
		var parts []string
		for _, p := range strings.Split(typeErr.Field, ".") {
			if p != "" && !unicode.IsUpper([]rune(p)[0]) {
				parts = append(parts, p)
			}
		}
		field := strings.Join(parts, ".")
		if field == "" {
			field = "body"
		}
		return errs.Field(field, "must be %s, not %s", jsonKind(typeErr.Type), typeErr.Value)
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return errs.Field(name, "unknown field")
	}
	return errs.Wrap(errs.Validation, err, "malformed JSON body: %s", strings.TrimPrefix(msg, "json: "))
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

var fieldCache sync.Map // reflect.Type → map[string]bool

// jsonFields returns the JSON names a struct type reads and writes, following
// embedded structs as encoding/json does.
func jsonFields(t reflect.Type) map[string]bool {
	if t == nil {
		return nil
	}
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]bool)
	}
	out := map[string]bool{}
	collectFields(t, out)
	fieldCache.Store(t, out)
	return out
}

func collectFields(t reflect.Type, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			collectFields(f.Type, out)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = true
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

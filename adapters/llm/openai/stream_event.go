package openai

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/tidwall/gjson"

	"github.com/openai/openai-go/v3/responses"
)

// streamEvent is a Responses stream event as generateResponses reads it:
// its JSON, whose few fields it uses are looked up when read. The SDK's
// own event type is a union of every event's fields that its reflective
// decoder fills in full for each delta — for a short answer, more CPU than
// the rest of the model call together. The fields are read as that
// decoder reads them (with gjson, leniently: null or a missing field is
// "", a number or boolean its text), and the response an ending event
// carries is decoded by the SDK's own type.
type streamEvent struct{ raw []byte }

// UnmarshalJSON keeps the event; encoding/json has checked it is valid
// JSON before calling it, as it did for the SDK's type. An event that is
// neither an object nor null is refused with the error the SDK's decoder
// gives (which ends the stream, as there).
func (e *streamEvent) UnmarshalJSON(data []byte) error {
	if v := gjson.ParseBytes(data); !v.IsObject() && v.Type != gjson.Null {
		var object struct{}
		err := json.Unmarshal(data, &object)
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			typeErr.Type = reflect.TypeFor[responses.ResponseStreamEventUnion]()
			return typeErr
		}
	}
	e.raw = append(e.raw[:0], data...)
	return nil
}

// field reads a field (a gjson path) as a string.
func (e *streamEvent) field(path string) string { return gjson.GetBytes(e.raw, path).String() }

// response is the response an ending event carries (fromResponse reads
// it); a missing or null one reads as an empty response.
func (e *streamEvent) response() gjson.Result {
	if v := gjson.GetBytes(e.raw, "response"); v.IsObject() {
		return v
	}
	return gjson.Result{}
}

package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

// A stream event is read as the SDK's decoder reads it: fields leniently
// (null or missing is "", a number its text), an event that is not an
// object refused with the SDK's own error.
func TestStreamEventsReadAsTheSDKReadsThem(t *testing.T) {
	raw := []byte(`{"type":"error","code":429,"message":null,"delta":"a\u00e9\n","item":{"type":"function_call","call_id":"c1"}}`)
	var ev streamEvent
	var sdk responses.ResponseStreamEventUnion
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sdk); err != nil {
		t.Fatal(err)
	}
	got := []string{ev.field("type"), ev.field("code"), ev.field("message"), ev.field("delta"), ev.field("item.type"), ev.field("item.call_id")}
	want := []string{sdk.Type, sdk.Code, sdk.Message, sdk.Delta, sdk.Item.Type, sdk.Item.CallID}
	if !reflect.DeepEqual(got, want) || got[1] != "429" || got[3] != "aé\n" {
		t.Errorf("read %q, the SDK reads %q", got, want)
	}
	wantErr := json.Unmarshal([]byte(`[1]`), &sdk)
	gotErr := json.Unmarshal([]byte(`[1]`), &streamEvent{})
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("a non-object event: %v, the SDK says %v", gotErr, wantErr)
	}
}

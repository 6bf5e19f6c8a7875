package domain

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

// TestTheItemBuildersReadBackThroughParseItem holds that every item the
// server builds parses back to what it was built from, as the run engine
// and the model adapters read it.
func TestTheItemBuildersReadBackThroughParseItem(t *testing.T) {
	msg := ParseItem(TextMessage("system", "input_text", "be brief"))
	if msg.Kind() != ItemMessage || msg.Role != "system" || msg.Text() != "be brief" {
		t.Fatalf("text message %+v", msg)
	}
	asst := ParseItem(AssistantMessage("msg_1", "done"))
	if asst.ID != "msg_1" || asst.Role != "assistant" || asst.Text() != "done" {
		t.Fatalf("assistant message %+v", asst)
	}
	if ParseItem(AssistantMessage("", "x")).ID != "" {
		t.Fatal("an assistant message without id got one")
	}
	call := ParseItem(FunctionCall("fc_1", "call_1", "read_file", `{"path":"a"}`))
	if call.Kind() != ItemFunctionCall || call.ID != "fc_1" || call.CallID != "call_1" || call.Name != "read_file" || call.Arguments != `{"path":"a"}` {
		t.Fatalf("function call %+v", call)
	}
	if ParseItem(FunctionCall("", "c", "n", "{}")).ID != "" {
		t.Fatal("a function call without id got one")
	}
	out := ParseItem(FunctionCallOutput("call_1", "42 lines"))
	if out.Kind() != ItemFunctionCallOutput || out.CallID != "call_1" || out.OutputText() != "42 lines" {
		t.Fatalf("function call output %+v", out)
	}
	r := ParseItem(Reasoning("rs_1", "thinking about it", "step one", "sig=="))
	if r.Kind() != ItemReasoning || r.ID != "rs_1" || r.ReasoningText() != "thinking about it" || r.EncryptedContent != "sig==" {
		t.Fatalf("reasoning %+v", r)
	}
	// Without a summary, the reasoning text stands in.
	if got := ParseItem(Reasoning("", "", "step one", "")).ReasoningText(); got != "step one" {
		t.Fatalf("reasoning text without a summary: %q", got)
	}
	if r := ParseItem(Reasoning("", "", "", "")); r.ID != "" || r.ReasoningText() != "" || r.EncryptedContent != "" {
		t.Fatalf("an empty reasoning item %+v", r)
	}
}

// TestAnItemIsReadWhateverShapeItCameIn holds the lenient reads: the easy
// message form without a type, string or list content, non-text parts
// contributing nothing, and a malformed item reading as empty.
func TestAnItemIsReadWhateverShapeItCameIn(t *testing.T) {
	for _, tc := range []struct {
		raw, kind, text string
	}{
		{`{"role":"user","content":"hi"}`, ItemMessage, "hi"},
		{`{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"x"},{"type":"input_text","text":"b"}]}`, ItemMessage, "ab"},
		{`{"type":"web_search_call","id":"ws_1"}`, "web_search_call", ""},
		{`{"type":"message","content":{"odd":true}}`, ItemMessage, ""},
		{`not json`, "", ""},
	} {
		it := ParseItem(json.RawMessage(tc.raw))
		if it.Kind() != tc.kind || it.Text() != tc.text {
			t.Errorf("%s: kind %q text %q, want %q %q", tc.raw, it.Kind(), it.Text(), tc.kind, tc.text)
		}
	}
	out := ParseItem(json.RawMessage(`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"part"}]}`))
	if out.OutputText() != "part" {
		t.Fatalf("a list output reads %q", out.OutputText())
	}
}

// TestAUserMessageCarriesItsImagesByReference holds that a message with
// images names each attachment (never its bytes), and that parts read
// back from either content shape.
func TestAUserMessageCarriesItsImagesByReference(t *testing.T) {
	img := Attachment{ID: "att_1", Name: "chart.png", Mime: "image/png", Size: 1234, Width: 640, Height: 480}
	plain := ParseItem(UserMessage("hello", nil))
	if parts := plain.Parts(); len(parts) != 1 || parts[0] != (ContentPart{Type: "input_text", Text: "hello"}) || plain.HasImages() {
		t.Fatalf("a text-only message: %+v", parts)
	}
	withImage := ParseItem(UserMessage("look", []Attachment{img}))
	parts := withImage.Parts()
	want := []ContentPart{{Type: "input_text", Text: "look"},
		{Type: PartInputImage, AttachmentID: "att_1", Mime: "image/png", Width: 640, Height: 480, Name: "chart.png"}}
	if !slices.Equal(parts, want) || !withImage.HasImages() || withImage.Role != "user" {
		t.Fatalf("a message with an image: %+v", parts)
	}
	if only := ParseItem(UserMessage("", []Attachment{img})).Parts(); len(only) != 1 || only[0].Type != PartInputImage {
		t.Fatalf("an image without text: %+v", only)
	}
	stringContent := ParseItem(json.RawMessage(`{"role":"user","content":"as a string"}`))
	if p := stringContent.Parts(); len(p) != 1 || p[0].Text != "as a string" {
		t.Fatalf("string content parts %+v", p)
	}
	if ParseItem(json.RawMessage(`{"type":"reasoning"}`)).Parts() != nil {
		t.Fatal("an item without content has parts")
	}
}

// TestADataURLRoundTrips holds DataURL and ParseDataURL, and what
// ParseDataURL refuses.
func TestADataURLRoundTrips(t *testing.T) {
	u := DataURL("image/png", []byte{0x89, 'P', 'N', 'G'})
	mime, b64, ok := ParseDataURL(u)
	if !ok || mime != "image/png" || b64 != "iVBORw==" || u != "data:image/png;base64,iVBORw==" {
		t.Fatalf("%q parsed as %q %q %v", u, mime, b64, ok)
	}
	for _, bad := range []string{"https://x/y.png", "data:image/png,raw", "data:;base64,AAAA", "data:image/png;base64"} {
		if _, _, ok := ParseDataURL(bad); ok {
			t.Errorf("%q parsed as a data URL", bad)
		}
	}
}

// TestNoNULCharacterReachesTheStore holds the NUL rules: a field holding
// one is refused by name, and a JSON document is walked to name every
// offending string or key by its path — up to a bound.
func TestNoNULCharacterReachesTheStore(t *testing.T) {
	if err := CheckNoNUL("name", "a\x00b"); errs.FieldsOf(err)["name"] != NULMessage {
		t.Fatalf("CheckNoNUL: %v", err)
	}
	if CheckNoNUL("name", "fine") != nil || HasNUL("fine") || !HasNUL("\x00") {
		t.Fatal("a clean field was refused")
	}
	err := CheckJSONNoNUL([]byte(`{"name":"a\u0000","steps":[{"prompt":"ok"},{"prompt":"b\u0000"}],"env":{"HO\u0000ME":"x"},"n":1,"ok":true}`))
	fields := errs.FieldsOf(err)
	if fields["name"] != NULMessage || fields["steps[1].prompt"] != NULMessage || !strings.Contains(fields["env"], "has a key that") ||
		len(fields) != 3 {
		t.Fatalf("the walk named %v", fields)
	}
	if err := CheckJSONNoNUL([]byte(`"top\u0000"`)); errs.FieldsOf(err)["body"] == "" {
		t.Fatalf("a top-level string: %v", err)
	}
	if err := CheckJSONNoNUL([]byte(`{"\u0000":1}`)); !strings.Contains(errs.FieldsOf(err)["body"], "has a key that") {
		t.Fatalf("a top-level key: %v", err)
	}
	for _, clean := range []string{`{"a":"b"}`, `{"a":"\u0000`, `not json \u0000`} {
		if err := CheckJSONNoNUL([]byte(clean)); err != nil {
			t.Errorf("%s: %v (clean, or left to its decoder)", clean, err)
		}
	}
	var many []string
	for range maxNULFields + 5 {
		many = append(many, "x\x00")
	}
	doc, _ := json.Marshal(many)
	if n := len(errs.FieldsOf(CheckJSONNoNUL(doc))); n != maxNULFields {
		t.Fatalf("a refusal listed %d fields, want the bound %d", n, maxNULFields)
	}
}

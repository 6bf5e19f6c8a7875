package errs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCodesAndMessages(t *testing.T) {
	cause := errors.New("sql: connection refused at 10.0.0.3")
	internal := Wrap(Internal, cause, "load agents")
	if CodeOf(internal) != Internal || MessageOf(internal) != "internal server error" {
		t.Fatal("internal detail must not be a message")
	}
	if !strings.Contains(internal.Error(), "10.0.0.3") || !errors.Is(internal, cause) {
		t.Fatal("the cause must stay in the log form")
	}
	wrapped := fmt.Errorf("ctx: %w", E(NotFound, "agent %s not found", "x"))
	if CodeOf(wrapped) != NotFound || MessageOf(wrapped) != "agent x not found" || !Is(wrapped, NotFound) {
		t.Fatal("wrapped coded error")
	}
	if CodeOf(errors.New("plain")) != Internal || CodeOf(nil) != "" || MessageOf(errors.New("secret")) != "internal server error" {
		t.Fatal("uncoded errors are internal")
	}
	f := Field("name", "is required")
	if f.Code != Validation || FieldsOf(f)["name"] != "is required" || !strings.Contains(f.Message, "name") {
		t.Fatalf("field error = %+v", f)
	}
	if FieldsOf(E(Conflict, "x")) != nil {
		t.Fatal("fields only for validation")
	}
	// The wire table's nine, and budget_exceeded (issue 43): a usage
	// budget refused the call until its period resets.
	if len(Codes) != 10 || Codes[9] != BudgetExceeded {
		t.Fatal("the wire table has nine codes, and budget_exceeded")
	}
}

func TestShort(t *testing.T) {
	if Short("why") != "why" {
		t.Fatal("a short text changed")
	}
	long := strings.Repeat("é", 400)
	got := Short(long)
	if len(got) > MaxUpstreamText+len("… (cut)") || !strings.HasSuffix(got, "… (cut)") || !utf8.ValidString(got) {
		t.Fatalf("Short: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

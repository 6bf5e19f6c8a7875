package errs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestFieldErrorsNameEveryOffendingField holds FieldErrors: nothing added
// is no error; each field is named once (the first problem wins), the
// first added leads the message, which counts the rest.
func TestFieldErrorsNameEveryOffendingField(t *testing.T) {
	var f FieldErrors
	if f.Err() != nil {
		t.Fatal("an empty collection is an error")
	}
	f.Add("name", "is required")
	if err := f.Err(); MessageOf(err) != "name: is required" {
		t.Fatalf("one field: %q", MessageOf(err))
	}
	f.Add("email", "must hold an @ (got %q)", "ann")
	f.Add("name", "a second complaint")
	err := f.Err()
	fields := FieldsOf(err)
	if CodeOf(err) != Validation || MessageOf(err) != "name: is required (and 1 more)" || len(fields) != 2 ||
		fields["name"] != "is required" || fields["email"] != `must hold an @ (got "ann")` {
		t.Fatalf("two fields: %q %v", MessageOf(err), fields)
	}
}

// TestMergeFoldsANestedValidationUnderItsPrefix holds Merge: a nested
// validation error's fields join under the prefix; another error is
// handed back for the caller to stop on.
func TestMergeFoldsANestedValidationUnderItsPrefix(t *testing.T) {
	var f FieldErrors
	if err := f.Merge("steps[0].", nil); err != nil || f.Err() != nil {
		t.Fatalf("merging nothing: %v", err)
	}
	var inner FieldErrors
	inner.Add("agent", "no such agent")
	inner.Add("prompt", "is required")
	if err := f.Merge("steps[0].", inner.Err()); err != nil {
		t.Fatal(err)
	}
	got := FieldsOf(f.Err())
	if got["steps[0].agent"] != "no such agent" || got["steps[0].prompt"] != "is required" || len(got) != 2 {
		t.Fatalf("merged %v", got)
	}
	store := Wrap(Unavailable, errors.New("busy"), "the database is busy")
	if err := f.Merge("steps[1].", store); err != store {
		t.Fatalf("a failure that is no validation came back as %v", err)
	}
	if len(FieldsOf(f.Err())) != 2 {
		t.Fatal("a non-validation error added fields")
	}
}

// TestTheLogFormCarriesEverything holds Error(): code, message, each
// field in name order, then the cause — and a bare code's message.
func TestTheLogFormCarriesEverything(t *testing.T) {
	var f FieldErrors
	f.Add("b", "second")
	f.Add("a", "first")
	e := f.Err().(*Error)
	e.Err = errors.New("cause")
	if got := e.Error(); got != "validation: b: second (and 1 more) [a: first] [b: second]: cause" {
		t.Fatalf("log form %q", got)
	}
	if got := (&Error{Code: Conflict}).Error(); got != "conflict" {
		t.Fatalf("a bare code %q", got)
	}
	if MessageOf(&Error{Code: NotFound}) != "not_found" {
		t.Fatalf("a coded error without a message says %q", MessageOf(&Error{Code: NotFound}))
	}
}

// TestTheCodesAreTheWireTable holds that Values (what the API document
// lists) is the Codes table, in its order.
func TestTheCodesAreTheWireTable(t *testing.T) {
	var want []string
	for _, c := range Codes {
		want = append(want, string(c))
	}
	if got := Code("").Values(); !slices.Equal(got, want) {
		t.Fatalf("Values %v, Codes %v", got, want)
	}
	if s := Short(strings.Repeat("a", MaxUpstreamText)); len(s) != MaxUpstreamText {
		t.Fatalf("a text at the bound was cut: %d", len(s))
	}
}

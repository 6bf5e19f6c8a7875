package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/errs"
)

// Stored text never holds a NUL character (U+0000). Postgres refuses one in
// a text column outright while SQLite keeps it, so a NUL that reached the
// store would answer 500 on one engine and be kept on the other. Every edge
// where outside text enters (JSON bodies, bus commands, /mcp tool
// arguments, webhook bodies, upload names, URL parameters) refuses it with
// these rules, so both engines accept exactly the same inputs.

// NULMessage is what a refusal says about the field that held a NUL.
const NULMessage = "must not contain a NUL character (\\u0000)"

// HasNUL reports whether s holds a NUL character.
func HasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// CheckNoNUL refuses a text field holding a NUL character. Returns
// validation naming field.
func CheckNoNUL(field, s string) error {
	if HasNUL(s) {
		return errs.Field(field, NULMessage)
	}
	return nil
}

// maxNULFields caps how many offending fields one refusal lists.
const maxNULFields = 20

// CheckJSONNoNUL refuses a JSON document any string (or object key) of
// which holds a NUL character, naming each offending field by its path as
// the client wrote it: name, steps[0].prompt, env.HOME; a key is named by
// the object holding it (body for the top level). A document that is not
// valid JSON is left to its decoder to refuse. Returns validation.
func CheckJSONNoNUL(doc []byte) error {
	// A NUL can only arrive escaped (a raw control character is not JSON),
	// so a document without the escape needs no walk.
	if !bytes.Contains(doc, []byte(`\u0000`)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var f errs.FieldErrors
	found := 0
	if walkNUL(dec, "", func(path, msg string) {
		if found < maxNULFields {
			f.Add(path, "%s", msg)
		}
		found++
	}) != nil {
		return nil
	}
	return f.Err()
}

// walkNUL reads one JSON value from dec, reporting every string holding a
// NUL at its path.
func walkNUL(dec *json.Decoder, path string, report func(path, msg string)) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case string:
		if HasNUL(t) {
			report(orBody(path), NULMessage)
		}
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if HasNUL(key) {
					report(orBody(path), "has a key that "+NULMessage)
				}
				// The path names the key as the client could write it.
				child := strings.ReplaceAll(key, "\x00", `\u0000`)
				if path != "" {
					child = path + "." + child
				}
				if err := walkNUL(dec, child, report); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walkNUL(dec, fmt.Sprintf("%s[%d]", path, i), report); err != nil {
					return err
				}
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
	}
	return nil
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

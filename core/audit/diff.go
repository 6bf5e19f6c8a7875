package audit

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Diff names the fields that differ between two states of an object, as
// their JSON shows them (a Go field name without a tag in snake case, a
// sealed one by what it seals: SealedAPIKey is api_key): a nested
// object's fields by dotted path (behavior.max_turns), a list as one
// field; the update time is not a change of its own. A zero before (a
// create) names every field after sets; a zero after (a delete) every
// field before had. Only names leave: the values are compared and dropped.
func Diff(before, after any) []string {
	var out []string
	diffJSON("", asMap(before), asMap(after), &out)
	return Names(out)
}

func asMap(v any) map[string]json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func diffJSON(prefix string, a, b map[string]json.RawMessage, out *[]string) {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		va, vb := a[k], b[k]
		name := fieldName(k)
		if name == "updated_at" || name == "revision" || empty(va) && empty(vb) || bytes.Equal(va, vb) {
			continue
		}
		var ma, mb map[string]json.RawMessage
		if (empty(va) || json.Unmarshal(va, &ma) == nil) && (empty(vb) || json.Unmarshal(vb, &mb) == nil) && (ma != nil || mb != nil) {
			diffJSON(prefix+name+".", ma, mb, out)
			continue
		}
		*out = append(*out, prefix+name)
	}
}

// empty is a value no one set: absent, null, false, 0, "", [] or {}.
func empty(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "", "null", "false", "0", `""`, "[]", "{}":
		return true
	}
	return false
}

// fieldName is a JSON key as the log names it: a Go field name (no tag)
// in snake case, keeping an acronym whole (BaseURL is base_url), without
// the Sealed of a value stored sealed.
func fieldName(k string) string {
	if k == "" || k[0] < 'A' || k[0] > 'Z' {
		return k
	}
	k = strings.TrimPrefix(k, "Sealed")
	var b strings.Builder
	for i, r := range k {
		upper := unicode.IsUpper(r)
		if upper && i > 0 {
			prev := rune(k[i-1])
			next := i+1 < len(k) && unicode.IsLower(rune(k[i+1]))
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && next {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

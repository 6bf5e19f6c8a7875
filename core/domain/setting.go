package domain

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agents-server/agents-server/core/errs"
)

// SettingKind is the type a global setting's text value must parse as.
type SettingKind string

// The setting kinds.
const (
	SettingString SettingKind = "string" // one line of text
	SettingText   SettingKind = "text"   // free multi-line text
	SettingInt    SettingKind = "int"    // a whole number within Min..Max
	SettingBool   SettingKind = "bool"   // "true" or "false"
	SettingURL    SettingKind = "url"    // an absolute URL with one of Schemes
)

// SettingDef is one row of the settings registry: everything the backend, the
// API and the settings panel need to know about a key.
type SettingDef struct {
	Key         string
	Kind        SettingKind
	Default     string
	Min, Max    int64    // bounds for SettingInt
	Schemes     []string // allowed schemes for SettingURL
	Group       string   // the panel the setting is shown in
	Label       string
	Description string
	Secret      bool // masked on read and sealed at rest
	// Parse, when set, reads a value its kind accepted further (a list of
	// entries, say) and returns its canonical text; its error is
	// validation naming the fault.
	Parse func(value string) (string, error)
}

// MaxSettingLen bounds a stored setting value.
const MaxSettingLen = 64 * 1024

// Normalize checks a value written to this setting and returns its canonical
// text. The empty value is always accepted: it returns the key to its default.
// Returns validation naming the value's fault.
func (d SettingDef) Normalize(value string) (string, error) {
	if value == "" {
		return "", nil
	}
	norm, err := d.normalizeKind(value)
	if err != nil || d.Parse == nil {
		return norm, err
	}
	return d.Parse(norm)
}

// normalizeKind checks value against the setting's kind alone.
func (d SettingDef) normalizeKind(value string) (string, error) {
	if len(value) > MaxSettingLen {
		return "", errs.Field("value", "must be at most %d bytes", MaxSettingLen)
	}
	if err := CheckNoNUL("value", value); err != nil {
		return "", err
	}
	switch d.Kind {
	case SettingString:
		if strings.ContainsAny(value, "\r\n") {
			return "", errs.Field("value", "%s takes a single line", d.Key)
		}
		return value, nil
	case SettingText:
		return value, nil
	case SettingInt:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return "", errs.Field("value", "%s takes a whole number, not %q", d.Key, value)
		}
		if n < d.Min || n > d.Max {
			return "", errs.Field("value", "%s must be between %d and %d", d.Key, d.Min, d.Max)
		}
		return strconv.FormatInt(n, 10), nil
	case SettingBool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return "", errs.Field("value", "%s takes true or false, not %q", d.Key, value)
		}
		return strconv.FormatBool(b), nil
	case SettingURL:
		u, err := url.Parse(strings.TrimSpace(value))
		if err != nil || u.Host == "" || !slices.Contains(d.Schemes, strings.ToLower(u.Scheme)) {
			return "", errs.Field("value", "%s takes an absolute URL with scheme %s", d.Key, strings.Join(d.Schemes, ", "))
		}
		return u.String(), nil
	}
	return "", errs.E(errs.Internal, "setting %s has unknown kind %q", d.Key, d.Kind)
}

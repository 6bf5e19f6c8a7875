package errs

import "unicode/utf8"

// MaxUpstreamText bounds what of another service's words (an error body,
// a JSON-RPC message, a transport error) an error message carries: enough
// to say why, never a page of what answered.
const MaxUpstreamText = 300

// Short cuts an upstream's words to MaxUpstreamText bytes, on a character
// boundary, marking the cut.
func Short(s string) string {
	if len(s) <= MaxUpstreamText {
		return s
	}
	cut := MaxUpstreamText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (cut)"
}

package domain

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// Message search: what of a transcript is searched and what a word is.
// Every store splits text into words with SearchWords and every query
// with SearchTerms, so SQLite's FTS5, Postgres's tsvector and an
// in-memory fake agree on what matches — no engine's own parser (which
// would read "example.com" as one host name on Postgres and as two
// words on SQLite) decides it.

// Limits of the search index.
const (
	// MaxSearchTextBytes is how much of one message is indexed: a
	// pasted log of megabytes is searchable by its head, and Postgres
	// refuses a tsvector over 1 MB.
	MaxSearchTextBytes = 256 << 10
	// MaxSearchWordBytes is the longest word indexed: longer runs are
	// hashes and blobs nobody types.
	MaxSearchWordBytes = 64
	// MaxSearchQueryChars bounds a query; MaxSearchTerms its words.
	MaxSearchQueryChars = 200
	MaxSearchTerms      = 8
)

// ReadableText is the text of an entry people read as a chat bubble: a
// user's message or the assistant's answer, with its role. Tool calls
// and their output, reasoning, notes and background-task notifications
// (shown as a note, not a bubble) are not searched; ok is false for them.
func ReadableText(e Entry) (role, text string, ok bool) {
	if e.Kind != KindItem || e.Source == SourceTaskNotification {
		return "", "", false
	}
	it := ParseItem(e.Item)
	if it.Kind() != "message" || (it.Role != "user" && it.Role != "assistant") {
		return "", "", false
	}
	text = it.Text()
	if strings.TrimSpace(text) == "" {
		return "", "", false
	}
	return it.Role, text, true
}

// isWordRune is what a word is made of: letters and digits, so
// punctuation and query syntax ("*", "-", ":", quotes) only separate.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// eachWord calls fn with the byte bounds of every word of text, in order.
func eachWord(text string, fn func(start, end int)) {
	start := -1
	for i, r := range text {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			fn(start, i)
			start = -1
		}
	}
	if start >= 0 {
		fn(start, len(text))
	}
}

// SearchWords is what the index holds of a message: its distinct words,
// lower-cased, in order of first use, joined by single spaces (the form
// both engines take: FTS5 splits it at the spaces, Postgres reads it as
// lexemes verbatim).
func SearchWords(text string) string {
	if len(text) > MaxSearchTextBytes {
		text = text[:MaxSearchTextBytes]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	seen := map[string]bool{}
	var b strings.Builder
	eachWord(text, func(start, end int) {
		w := strings.ToLower(text[start:end])
		if len(w) > MaxSearchWordBytes || seen[w] {
			return
		}
		seen[w] = true
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	})
	return b.String()
}

// SearchTerms reads a query as plain words: every character that is not a
// letter or digit separates, so no input is query syntax. Each term
// matches the words it begins (the box searches as one types), and a
// message matches when it holds every term. Returns validation (field q)
// when the query is empty, too long or has no word in it.
func SearchTerms(q string) ([]string, error) {
	if utf8.RuneCountInString(q) > MaxSearchQueryChars {
		return nil, errs.Field("q", "is longer than %d characters", MaxSearchQueryChars)
	}
	var terms []string
	eachWord(q, func(start, end int) {
		if w := strings.ToLower(q[start:end]); !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	})
	if len(terms) == 0 {
		return nil, errs.Field("q", "type a word to search for")
	}
	if len(terms) > MaxSearchTerms {
		return nil, errs.Field("q", "has more than %d words", MaxSearchTerms)
	}
	return terms, nil
}

// MatchesTerms reports whether a message whose SearchWords are words
// holds every term (as the start of one of its words).
func MatchesTerms(words string, terms []string) bool {
	list := strings.Split(words, " ")
	for _, t := range terms {
		found := false
		for _, w := range list {
			if strings.HasPrefix(w, t) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// SnippetPart is a run of a hit's snippet; Hit marks a word the search
// matched. A snippet is plain text in parts, never markup, so a client
// renders the marks without trusting the message.
type SnippetPart struct {
	Text string `json:"text"`
	Hit  bool   `json:"hit,omitempty"`
}

// Snippet widths, in bytes: the context kept before the first match and
// the whole window.
const (
	snippetLead  = 60
	snippetWidth = 200
)

// Snippet is a short window of text around its first word matching a
// term, with every matching word in it marked; whitespace runs read as
// one space, and "…" stands for what was cut.
func Snippet(text string, terms []string) []SnippetPart {
	type span struct{ start, end int }
	var hits []span
	eachWord(text, func(start, end int) {
		w := strings.ToLower(text[start:end])
		for _, t := range terms {
			if strings.HasPrefix(w, t) {
				hits = append(hits, span{start, end})
				return
			}
		}
	})
	from := 0
	if len(hits) > 0 && hits[0].start > snippetLead {
		from = wordStartAfter(text, hits[0].start-snippetLead)
	}
	to := min(len(text), from+snippetWidth)
	if len(hits) > 0 {
		to = max(to, min(len(text), hits[0].end))
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	var parts []SnippetPart
	add := func(s string, hit bool) {
		if s = collapseSpace(s); s != "" {
			parts = append(parts, SnippetPart{Text: s, Hit: hit})
		}
	}
	if from > 0 {
		add("…", false)
	}
	at := from
	for _, h := range hits {
		if h.start < from || h.end > to {
			continue
		}
		add(text[at:h.start], false)
		add(text[h.start:h.end], true)
		at = h.end
	}
	add(text[at:to], false)
	if to < len(text) {
		add("…", false)
	}
	if len(parts) > 0 && !parts[0].Hit {
		parts[0].Text = strings.TrimLeft(parts[0].Text, " ")
	}
	return parts
}

// wordStartAfter is the first word boundary at or after i (a rune start
// at least), so a snippet does not open mid-word.
func wordStartAfter(text string, i int) int {
	for i < len(text) && !utf8.RuneStart(text[i]) {
		i++
	}
	for j := i; j < len(text); {
		r, n := utf8.DecodeRuneInString(text[j:])
		if unicode.IsSpace(r) {
			return j + n
		}
		j += n
		if j-i > 20 {
			break
		}
	}
	return i
}

// collapseSpace turns every run of whitespace into one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

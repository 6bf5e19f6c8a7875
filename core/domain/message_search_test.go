package domain

import (
	"strings"
	"testing"
)

func render(parts []SnippetPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Hit {
			b.WriteString("[" + p.Text + "]")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// A snippet opens near the first match at a word, marks every matching
// word in its window, reads whitespace runs as one space and shows cuts.
func TestSnippetMarksTheMatchedWords(t *testing.T) {
	long := strings.Repeat("filler words here ", 20)
	for _, c := range []struct{ text, want string }{
		{"Deploy the\n\n  ROCKET now", "Deploy the [ROCKET] now"},
		{"rockets and a rocketeer", "[rockets] and a [rocketeer]"},
		{long + "the rocket flies", "…filler words here filler words here filler words here the [rocket] flies"},
		{"the rocket " + long, "the [rocket] " + long[:189] + "…"},
		{"no match at all", "no match at all"},
	} {
		if got := render(Snippet(c.text, []string{"rocket"})); got != c.want {
			t.Errorf("Snippet(%.30q…):\n got %q\nwant %q", c.text, got, c.want)
		}
	}
}

// Words are letters and digits, lower-cased, distinct; anything else only
// separates, in what is indexed and in what is typed.
func TestSearchWordsAndTerms(t *testing.T) {
	if got := SearchWords(`Hello, hello: e-mail "x*y" 東京 Ünïcode ` + strings.Repeat("z", MaxSearchWordBytes+1)); got != "hello e mail x y 東京 ünïcode" {
		t.Fatalf("SearchWords = %q", got)
	}
	terms, err := SearchTerms(` "Rock*" -et: OR rock `)
	if err != nil || strings.Join(terms, ",") != "rock,et,or" {
		t.Fatalf("SearchTerms = %q, %v", terms, err)
	}
	for _, q := range []string{"", "  ", `*"-:()`, "a b c d e f g h i"[:2*MaxSearchTerms+1], strings.Repeat("é", MaxSearchQueryChars+1)} {
		if _, err := SearchTerms(q); err == nil {
			t.Errorf("SearchTerms(%.20q) took it", q)
		}
	}
	if !MatchesTerms("the rocket flies", []string{"roc", "fl"}) || MatchesTerms("the rocket flies", []string{"roc", "ocket"}) {
		t.Fatal("MatchesTerms: every term must start a word")
	}
}

package models

import (
	"strings"
	"testing"
)

func TestTitleFromRefusesAnEcho(t *testing.T) {
	long := strings.Repeat("please help me write a parser ", 5)
	for _, c := range []struct{ answer, input, want string }{
		{"Parser help", long, "Parser help"},
		{"You said: " + TitlePrefix + "hi there", "hi there", "hi there"},
		{long, long, "please help me write a parser…"},
		{"hi", "hi", "hi"},
	} {
		if got := titleFrom(c.answer, c.input); got != c.want {
			t.Errorf("titleFrom(%.30q, %.30q) = %q, want %q", c.answer, c.input, got, c.want)
		}
	}
}

func TestCleanTitle(t *testing.T) {
	for in, want := range map[string]string{
		`"Planning a trip."`:              "Planning a trip",
		"**Go tips**\nmore text":          "Go tips",
		"  Why?  ":                        "Why",
		strings.Repeat("long words ", 20): strings.TrimSpace(strings.Repeat("long words ", 20)[:59]) + "…",
	} {
		if got := cleanTitle(in); got != want {
			t.Errorf("cleanTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

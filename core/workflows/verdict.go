// Package workflows decides how a workflow execution moves: what a gate
// step reported, which step runs next, whether a bound stops it, and how
// far it has come. It is pure — a definition snapshot and an execution's
// state in, a decision out — so the rules are tested without a database;
// the task manager's driver does the launching.
package workflows

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Verdict is what a gate step reported.
type Verdict int

// The verdicts: a gate that reported neither sentinel is Unreported, a
// broken step rather than a coin flip.
const (
	Unreported Verdict = iota
	Pass
	Fail
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "unreported"
}

// fenced finds a fenced code block's body.
var fenced = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*\\n(.*?)```")

// ReadVerdict reads a gate's report from a step's final output: a JSON
// object (bare, or the last fenced block) with a boolean passed or a
// verdict/result/status equal to a sentinel; else the last non-empty line,
// which must be the pass or the fail word. Words compare without case,
// and markdown emphasis or a closing period around the line is ignored.
func ReadVerdict(output, pass, fail string) Verdict {
	if v := structured(output, pass, fail); v != Unreported {
		return v
	}
	return sentinel(lastLine(output), pass, fail)
}

func structured(output, pass, fail string) Verdict {
	candidates := []string{strings.TrimSpace(output)}
	if m := fenced.FindAllStringSubmatch(output, -1); len(m) > 0 {
		candidates = append(candidates, strings.TrimSpace(m[len(m)-1][1]))
	}
	for _, c := range candidates {
		var obj map[string]json.RawMessage
		if !strings.HasPrefix(c, "{") || json.Unmarshal([]byte(c), &obj) != nil {
			continue
		}
		var passed bool
		if raw, ok := obj["passed"]; ok && json.Unmarshal(raw, &passed) == nil {
			if passed {
				return Pass
			}
			return Fail
		}
		for _, key := range []string{"verdict", "result", "status"} {
			var word string
			if raw, ok := obj[key]; ok && json.Unmarshal(raw, &word) == nil {
				if v := sentinel(word, pass, fail); v != Unreported {
					return v
				}
			}
		}
	}
	return Unreported
}

func lastLine(output string) string {
	lines := strings.Split(output, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// sentinel compares one line with the two words, ignoring case and the
// decoration a model puts around a last word (**PASS**, `FAIL`, PASS.).
func sentinel(line, pass, fail string) Verdict {
	l := strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "*_`#>\"'.!:- "))
	switch {
	case l == "":
		return Unreported
	case strings.EqualFold(l, strings.TrimSpace(pass)):
		return Pass
	case strings.EqualFold(l, strings.TrimSpace(fail)):
		return Fail
	}
	return Unreported
}

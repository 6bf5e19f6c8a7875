package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// GuardrailStage is where in a run a guardrail inspects text.
type GuardrailStage string

// The stages: the run input before the first model call, the final output,
// a tool call's arguments before the tool runs, a tool's result before the
// model reads it.
const (
	StageInput      GuardrailStage = "input"
	StageOutput     GuardrailStage = "output"
	StageToolInput  GuardrailStage = "tool_input"
	StageToolOutput GuardrailStage = "tool_output"
)

// GuardrailStages lists every stage.
var GuardrailStages = []GuardrailStage{StageInput, StageOutput, StageToolInput, StageToolOutput}

// GuardrailMode is how a guardrail judges text.
type GuardrailMode string

// The modes.
const (
	ModeRegex     GuardrailMode = "regex"      // trips when Pattern matches
	ModeMaxLength GuardrailMode = "max_length" // trips past MaxChars characters
)

// Guardrail is a named check run at one or more stages of a run. Its name is
// its identity: agents reference guardrails by name.
type Guardrail struct {
	ID          string
	Name        string
	Description string
	Stages      []GuardrailStage
	Mode        GuardrailMode
	Pattern     string
	MaxChars    int
	// Blocking applies at the input stage: the check completes before the
	// first model call (a gate) instead of racing it.
	Blocking  bool
	Builtin   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Guardrail bounds: the name in characters (the API document states it),
// the pattern in bytes.
const (
	MaxGuardrailName    = 100
	maxGuardrailPattern = 10_000
)

// Verdict is a guardrail's judgement of one text.
type Verdict struct {
	Tripped bool
	Reason  string
}

// GuardrailCheck is a validated, compiled guardrail ready to evaluate.
type GuardrailCheck struct {
	g  Guardrail
	re *regexp.Regexp
}

// CompileGuardrail validates g and compiles its pattern. Returns validation
// naming every offending field.
func CompileGuardrail(g Guardrail) (*GuardrailCheck, error) {
	var f errs.FieldErrors
	name := strings.TrimSpace(g.Name)
	switch {
	case name == "":
		f.Add("name", "is required")
	case utf8.RuneCountInString(name) > MaxGuardrailName:
		f.Add("name", "must be at most %d characters", MaxGuardrailName)
	case name != g.Name:
		f.Add("name", "must not start or end with spaces")
	}
	if len(g.Stages) == 0 {
		f.Add("stages", "name at least one of input, output, tool_input, tool_output")
	}
	for i, s := range g.Stages {
		if !slices.Contains(GuardrailStages, s) {
			f.Add(fmt.Sprintf("stages[%d]", i), "%q is not a stage (input, output, tool_input, tool_output)", s)
		} else if slices.Index(g.Stages, s) != i {
			f.Add(fmt.Sprintf("stages[%d]", i), "%q is listed twice", s)
		}
	}
	check := &GuardrailCheck{g: g}
	switch g.Mode {
	case ModeRegex:
		if g.Pattern == "" {
			f.Add("pattern", "is required for a regex guardrail")
		} else if len(g.Pattern) > maxGuardrailPattern {
			f.Add("pattern", "must be at most %d bytes", maxGuardrailPattern)
		} else if re, err := regexp.Compile(g.Pattern); err != nil {
			f.Add("pattern", "does not compile: %v", err)
		} else {
			check.re = re
		}
		if g.MaxChars != 0 {
			f.Add("max_chars", "applies only to max_length guardrails")
		}
	case ModeMaxLength:
		if g.MaxChars <= 0 {
			f.Add("max_chars", "must be a positive number of characters")
		}
		if g.Pattern != "" {
			f.Add("pattern", "applies only to regex guardrails")
		}
	default:
		f.Add("mode", "must be regex or max_length")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	return check, nil
}

// Guardrail returns the definition the check was compiled from.
func (c *GuardrailCheck) Guardrail() Guardrail { return c.g }

// Applies reports whether the guardrail runs at stage.
func (c *GuardrailCheck) Applies(stage GuardrailStage) bool {
	return slices.Contains(c.g.Stages, stage)
}

// Evaluate judges text at stage; a guardrail that does not run at the stage
// never trips.
func (c *GuardrailCheck) Evaluate(stage GuardrailStage, text string) Verdict {
	if !c.Applies(stage) {
		return Verdict{}
	}
	switch c.g.Mode {
	case ModeRegex:
		if loc := c.re.FindStringIndex(text); loc != nil {
			return Verdict{Tripped: true, Reason: fmt.Sprintf("%s matched %q", c.g.Name, TruncateRunes(text[loc[0]:loc[1]], 80))}
		}
	case ModeMaxLength:
		if n := utf8.RuneCountInString(text); n > c.g.MaxChars {
			return Verdict{Tripped: true, Reason: fmt.Sprintf("%s: %d characters exceed the limit of %d", c.g.Name, n, c.g.MaxChars)}
		}
	}
	return Verdict{}
}

// TruncateRunes cuts s to at most n characters, marking the cut: for
// quoting what a person or a client wrote.
func TruncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

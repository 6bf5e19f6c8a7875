// Package skills keeps SKILL.md documents: know-how packaged once (a
// release checklist, a house style) that every agent may read on demand.
package skills

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Document limits: a SKILL.md's size, and its frontmatter fields'.
const (
	MaxDocument    = 256 << 10
	MaxName        = 64
	MaxDescription = 1024
)

// namePattern is what a skill's name may be: it stands in the index and in
// read_skill's argument after a repository label, so it holds no spaces,
// colons or slashes.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Document is a SKILL.md as read at save time: the frontmatter's name and
// description, and the instructions after it.
type Document struct {
	Name        string
	Description string
	Body        string
}

// Parse reads a SKILL.md: a YAML frontmatter block between "---" lines at
// the very top, holding a mapping with a string name and description, then
// the body. Other frontmatter keys (license, allowed-tools, metadata) are
// allowed and kept only in the content. Returns validation naming the
// problem, on the content field.
func Parse(content string) (Document, error) {
	if len(content) > MaxDocument {
		return Document{}, errs.Field("content", "is %d bytes: a skill holds at most %d (256 KiB)", len(content), MaxDocument)
	}
	if !utf8.ValidString(content) {
		return Document{}, errs.Field("content", "is not UTF-8 text")
	}
	if domain.HasNUL(content) {
		return Document{}, errs.Field("content", domain.NULMessage)
	}
	text := strings.TrimPrefix(content, "\uFEFF")
	front, body, ok := split(text)
	if !ok {
		return Document{}, errs.Field("content", "has no frontmatter: a SKILL.md starts with a --- line, name: and description:, "+
			"and a closing --- line")
	}
	if blank(front) {
		return Document{}, errs.Field("content", "has an empty frontmatter: it needs name: and description:")
	}
	var fields map[string]any
	if err := yaml.Load([]byte(front), &fields); err != nil {
		return Document{}, errs.Field("content", "has frontmatter that is not a YAML mapping: %s", yamlReason(err))
	}
	if fields == nil {
		return Document{}, errs.Field("content", "has an empty frontmatter: it needs name: and description:")
	}
	name, err := stringField(fields, "name")
	if err != nil {
		return Document{}, err
	}
	desc, err := stringField(fields, "description")
	if err != nil {
		return Document{}, err
	}
	switch {
	case len(name) > MaxName:
		return Document{}, errs.Field("content", "frontmatter name is longer than %d characters", MaxName)
	case !namePattern.MatchString(name):
		return Document{}, errs.Field("content", "frontmatter name %q may hold only letters, digits, '.', '_' and '-' "+
			"(no spaces, colons or slashes), starting with a letter or digit", name)
	case utf8.RuneCountInString(desc) > MaxDescription:
		return Document{}, errs.Field("content", "frontmatter description is longer than %d characters", MaxDescription)
	case domain.HasNUL(desc):
		// YAML spells one "\0" in a quoted string.
		return Document{}, errs.Field("content", "frontmatter description %s", domain.NULMessage)
	}
	return Document{Name: name, Description: desc, Body: body}, nil
}

// split cuts the frontmatter off the top: the text between a first line of
// "---" and the next line of "---" (or "..."). ok is false when there is no
// such block.
func split(text string) (front, body string, ok bool) {
	first, rest, found := cutLine(text)
	if !found || strings.TrimRight(first, " \t") != "---" {
		return "", "", false
	}
	var b strings.Builder
	for rest != "" {
		var line string
		line, rest, _ = cutLine(rest)
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			return b.String(), rest, true
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return "", "", false
}

// blank reports whether YAML text holds nothing but blank lines and
// comments.
func blank(yamlText string) bool {
	for _, line := range strings.Split(yamlText, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// cutLine splits off the first line (without its \n or \r\n).
func cutLine(s string) (line, rest string, found bool) {
	line, rest, found = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest, found
}

// stringField reads a required frontmatter string, trimmed.
func stringField(fields map[string]any, key string) (string, error) {
	v, ok := fields[key]
	if !ok || v == nil {
		return "", errs.Field("content", "frontmatter has no %s:", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", errs.Field("content", "frontmatter %s: is not text", key)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errs.Field("content", "frontmatter %s: is empty", key)
	}
	return s, nil
}

// yamlReason is the parser's complaint, on one line.
func yamlReason(err error) string {
	return strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " ")
}

package skills

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

func TestParseReadsNameDescriptionAndBody(t *testing.T) {
	for _, c := range []struct{ content, name, desc, body string }{
		{"---\nname: release\ndescription: How we cut a release\n---\n# Steps\n1. Tag\n", "release", "How we cut a release", "# Steps\n1. Tag\n"},
		{"\uFEFF---\r\nname: 'house-style'\r\ndescription: >\r\n  Our prose\r\n  rules.\r\nlicense: MIT\r\n---\r\nBody\r\n",
			"house-style", "Our prose rules.", "Body\r\n"},
		{"---\nname: api_v2.client\ndescription: \"Calling: the internal API\"\nmetadata: {team: infra}\n...\n", "api_v2.client",
			"Calling: the internal API", ""},
		{"---   \nname:  spaced  \ndescription: d\n---", "spaced", "d", ""},
	} {
		d, err := Parse(c.content)
		if err != nil || d.Name != c.name || d.Description != c.desc || d.Body != c.body {
			t.Errorf("Parse(%q) = %+v, %v; want %q %q %q", c.content, d, err, c.name, c.desc, c.body)
		}
	}
}

func TestParseNamesTheProblem(t *testing.T) {
	for content, says := range map[string]string{
		"# Just markdown\n":                                                      "has no frontmatter",
		"---\nname: x\ndescription: y\n":                                         "has no frontmatter",
		"\n---\nname: x\ndescription: y\n---\n":                                  "has no frontmatter",
		"---\n---\nbody":                                                         "empty frontmatter",
		"---\n# only a comment\n---\n":                                           "empty frontmatter",
		"---\n- a\n- b\n---\n":                                                   "not a YAML mapping",
		"---\nname: [unclosed\ndescription: d\n---\n":                            "not a YAML mapping",
		"---\nname: a\nname: b\ndescription: d\n---\n":                           "not a YAML mapping",
		"---\ndescription: d\n---\n":                                             "has no name:",
		"---\nname: x\n---\n":                                                    "has no description:",
		"---\nname: 42\ndescription: d\n---\n":                                   "name: is not text",
		"---\nname: x\ndescription: [a, b]\n---\n":                               "description: is not text",
		"---\nname: \"  \"\ndescription: d\n---\n":                               "name: is empty",
		"---\nname: x\ndescription: ~\n---\n":                                    "has no description:",
		"---\nname: my skill\ndescription: d\n---\n":                             "may hold only",
		"---\nname: owner/repo:x\ndescription: d\n---\n":                         "may hold only",
		"---\nname: -x\ndescription: d\n---\n":                                   "may hold only",
		"---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n":      "longer than 64",
		"---\nname: x\ndescription: " + strings.Repeat("é", 1025) + "\n---\n":    "longer than 1024",
		"---\nname: x\ndescription: d\n---\n" + strings.Repeat("x", MaxDocument): "256 KiB",
		"---\nname: x\ndescription: d\n---\n\xff":                                "not UTF-8",
	} {
		_, err := Parse(content)
		if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.FieldsOf(err)["content"], says) {
			t.Errorf("Parse(%.60q) = %v, want a content fault saying %q", content, err, says)
		}
	}
}

// FuzzParse holds the parser to its contract for any text: it never panics,
// and what it accepts is a well-formed SKILL.md — a frontmatter block at the
// top whose name and description read back the same from a document
// rebuilt from them.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: release\ndescription: How we cut a release\n---\n# Steps\n",
		"---\nname: a\ndescription: |\n  multi\n  line\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n",
		"---\n{name: a, description: b}\n---\n",
		"---\nname: a\ndescription: b\n",
		"---\n- a\n---\n",
		"---\nname: !!binary aGk=\ndescription: d\n---\n",
		"---\nname: a\ndescription: b\n...\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		d, err := Parse(content)
		if err != nil {
			if errs.CodeOf(err) != errs.Validation || errs.FieldsOf(err)["content"] == "" {
				t.Fatalf("refused with %v, want a content fault", err)
			}
			return
		}
		if !strings.HasPrefix(strings.TrimPrefix(content, "\uFEFF"), "---") || !namePattern.MatchString(d.Name) ||
			len(d.Name) > MaxName || strings.TrimSpace(d.Description) == "" || d.Description != strings.TrimSpace(d.Description) ||
			!strings.HasSuffix(content, d.Body) {
			t.Fatalf("accepted a malformed document %q as %+v", content, d)
		}
		again, err := Parse("---\nname: " + d.Name + "\ndescription: " + quote(d.Description) + "\n---\n" + d.Body)
		if err != nil || again.Name != d.Name || again.Description != d.Description {
			t.Fatalf("%+v does not read back: %+v, %v", d, again, err)
		}
	})
}

// quote writes a YAML double-quoted scalar.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

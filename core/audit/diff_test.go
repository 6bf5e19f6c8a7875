package audit

import (
	"slices"
	"testing"
)

type inner struct {
	MaxTurns int    `json:"max_turns"`
	Mode     string `json:"mode,omitempty"`
}

type thing struct {
	Name     string   `json:"name"`
	APIKey   string   `json:"api_key"`
	Tags     []string `json:"tags"`
	Behavior inner    `json:"behavior"`
	Created  string   `json:"created_at"`
}

// Diff names what changed, by dotted path, and never a value.
func TestDiffNamesTheChangedFieldsOnly(t *testing.T) {
	before := thing{Name: "a", APIKey: "sk-old", Tags: []string{"x"}, Behavior: inner{MaxTurns: 5}, Created: "t0"}
	for _, c := range []struct {
		name          string
		before, after any
		want          []string
	}{
		{"nothing", before, before, nil},
		{"a secret and a nested field", before,
			thing{Name: "a", APIKey: "sk-new", Tags: []string{"x"}, Behavior: inner{MaxTurns: 6}, Created: "t0"},
			[]string{"api_key", "behavior.max_turns"}},
		{"a list as one field", before, thing{Name: "a", APIKey: "sk-old", Tags: []string{"x", "y"}, Behavior: inner{MaxTurns: 5}, Created: "t0"},
			[]string{"tags"}},
		{"a create names what it sets", nil, thing{Name: "b", Behavior: inner{Mode: "m"}}, []string{"behavior.mode", "name"}},
		{"a delete names what there was", before, nil, []string{"api_key", "behavior.max_turns", "created_at", "name", "tags"}},
	} {
		got := Diff(c.before, c.after)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		for _, f := range got {
			if f == "sk-old" || f == "sk-new" {
				t.Fatalf("%s: a value left as a name", c.name)
			}
		}
	}
}

// A Go field without a tag is named in snake case, sealed ones by what
// they seal.
func TestFieldNamesReadAsTheWireNamesThem(t *testing.T) {
	for in, want := range map[string]string{"SealedAPIKey": "api_key", "BaseURL": "base_url", "ID": "id", "OwnerID": "owner_id",
		"Name": "name", "max_turns": "max_turns", "AuthMode": "auth_mode", "SealedChatGPTToken": "chat_gpt_token", "MCPServers": "mcp_servers"} {
		if got := fieldName(in); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

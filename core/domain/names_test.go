package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// TestToolNamesAreSpelledForEveryModelAPI holds the names built for tools
// — an MCP server's tool, a handoff, any text made safe — and that an MCP
// name splits back into its server and tool.
func TestToolNamesAreSpelledForEveryModelAPI(t *testing.T) {
	name := MCPToolName("github", "create_issue")
	if name != "github__create_issue" {
		t.Fatalf("MCPToolName = %q", name)
	}
	for _, tc := range []struct {
		name, server, tool string
		ok                 bool
	}{
		{name, "github", "create_issue", true},
		{"srv__a__b", "srv", "a__b", true},
		{"plain", "", "", false},
		{"__tool", "", "tool", false},
		{"srv__", "srv", "", false},
	} {
		server, tool, ok := SplitMCPToolName(tc.name)
		if ok != tc.ok || (ok && (server != tc.server || tool != tc.tool)) {
			t.Errorf("split %q = %q %q %v, want %q %q %v", tc.name, server, tool, ok, tc.server, tc.tool, tc.ok)
		}
	}
	if got := SafeToolName("web.search (v2)/ü"); got != "web_search__v2___" || !ValidToolName(got) {
		t.Fatalf("SafeToolName = %q", got)
	}
	if got := SafeToolName("ok_name-1"); got != "ok_name-1" {
		t.Fatalf("a safe name changed: %q", got)
	}
	long := HandoffToolName(strings.Repeat("reviewer ", 20))
	if len(long) > 64 || !strings.HasPrefix(long, "transfer_to_reviewer_") || !ValidToolName(long) {
		t.Fatalf("a long handoff name %q (%d)", long, len(long))
	}
}

// TestASkillIsNamedByItsSource holds a skill's model-facing name: bare
// when authored here, label:name when imported.
func TestASkillIsNamedByItsSource(t *testing.T) {
	own := Skill{Name: "release"}
	imported := Skill{Name: "review", RepoLabel: "acme/tools", SourceRepo: "https://github.com/acme/tools"}
	if own.ModelName() != "release" || own.Imported() || imported.ModelName() != "acme/tools:review" || !imported.Imported() {
		t.Fatalf("%q %v, %q %v", own.ModelName(), own.Imported(), imported.ModelName(), imported.Imported())
	}
}

// TestAPinnedHostKeyPrintsAsOpenSSHDoes holds the fingerprint the pin is
// shown by: the one ssh-keygen -lf prints for the key.
func TestAPinnedHostKeyPrintsAsOpenSSHDoes(t *testing.T) {
	k := SSHHostKey{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMMBnBuRnDFWfPodA9o3AGDhqSS9ye53rj6CId0eVBvd root@vm", PinnedAt: time.Now()}
	if k.IsZero() || k.Type() != "ssh-ed25519" || k.Fingerprint() != "SHA256:OCCj1smhzghor9qqX98MUHKDcIPxoSGG2VHrYiSj4Jw" {
		t.Fatalf("type %q fingerprint %q", k.Type(), k.Fingerprint())
	}
	for _, bad := range []SSHHostKey{{}, {Key: "ssh-ed25519"}, {Key: "ssh-ed25519 not*base64"}} {
		if bad.Fingerprint() != "" {
			t.Errorf("%q has fingerprint %q", bad.Key, bad.Fingerprint())
		}
	}
	if !(SSHHostKey{}).IsZero() || (SSHHostKey{}).Type() != "" {
		t.Fatal("an empty pin")
	}
}

// TestAChatGPTProviderIsSignedInOnlyWithASignIn holds ChatGPTLoggedIn.
func TestAChatGPTProviderIsSignedInOnlyWithASignIn(t *testing.T) {
	for _, tc := range []struct {
		p    Provider
		want bool
	}{
		{Provider{AuthMode: AuthChatGPTLogin, SealedChatGPTToken: "enc"}, true},
		{Provider{AuthMode: AuthChatGPTLogin}, false},
		{Provider{AuthMode: AuthAPIKey, SealedChatGPTToken: "left over"}, false},
	} {
		if got := tc.p.ChatGPTLoggedIn(); got != tc.want {
			t.Errorf("%+v signed in %v", tc.p, got)
		}
	}
}

// TestModelSettingsAreCheckedOnTheirOwn holds ModelSettings.Validate, the
// playground's check, field by field under model_settings.
func TestModelSettingsAreCheckedOnTheirOwn(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		m     ModelSettings
		field string
	}{
		{ModelSettings{Temperature: f(-0.1)}, "temperature"},
		{ModelSettings{TopP: f(0)}, "top_p"},
		{ModelSettings{TopP: f(1.01)}, "top_p"},
		{ModelSettings{MaxOutputTokens: n(0)}, "max_output_tokens"},
		{ModelSettings{ReasoningEffort: "extreme"}, "reasoning_effort"},
		{ModelSettings{ReasoningSummary: "long"}, "reasoning_summary"},
		{ModelSettings{Verbosity: "chatty"}, "verbosity"},
		{ModelSettings{ToolChoice: "bad name!"}, "tool_choice"},
	} {
		if errs.FieldsOf(tc.m.Validate())["model_settings."+tc.field] == "" {
			t.Errorf("%+v: no refusal on %s", tc.m, tc.field)
		}
	}
	ok := ModelSettings{Temperature: f(2), TopP: f(1), MaxOutputTokens: n(1), ReasoningEffort: EffortHigh, ReasoningSummary: "auto",
		Verbosity: "low", ToolChoice: "read_file"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("settings at their bounds: %v", err)
	}
	for _, tc := range []string{"auto", "required", "none", ""} {
		if err := (ModelSettings{ToolChoice: tc}).Validate(); err != nil {
			t.Errorf("tool_choice %q: %v", tc, err)
		}
	}
}

// TestAnAgentsIdentityAndListsAreBounded holds the identity and list
// checks TestAgentSpecValidation leaves out.
func TestAnAgentsIdentityAndListsAreBounded(t *testing.T) {
	base := AgentSpec{Name: "coder", Model: "m"}
	long := make([]string, MaxListLen+1)
	for i := range long {
		long[i] = strings.Repeat("t", i%60+1) + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		edit  func(*AgentSpec)
		field string
	}{
		{func(s *AgentSpec) { s.Name = "" }, "name"},
		{func(s *AgentSpec) { s.Name = strings.Repeat("n", MaxAgentName+1) }, "name"},
		{func(s *AgentSpec) { s.Name = "two\nlines" }, "name"},
		{func(s *AgentSpec) { s.Avatar = "/avatars/unknown.svg" }, "avatar"},
		{func(s *AgentSpec) { s.Description = strings.Repeat("d", MaxAgentDescription+1) }, "description"},
		{func(s *AgentSpec) { s.Instructions = strings.Repeat("i", MaxAgentInstructions+1) }, "instructions"},
		{func(s *AgentSpec) { s.ContextWindow = -1 }, "context_window"},
		{func(s *AgentSpec) { s.Tools = long }, "tools"},
		{func(s *AgentSpec) { s.Skills = []string{"k", " "} }, "skills[1]"},
		{func(s *AgentSpec) { s.Handoffs = []string{"a", "a"} }, "handoffs[1]"},
		{func(s *AgentSpec) { s.Tools = []string{"bad name"} }, "tools[0]"},
		{func(s *AgentSpec) { s.Resilience.FallbackModels = make([]FallbackModel, MaxFallbacks+1) }, "resilience.fallback_models"},
	} {
		spec := base
		tc.edit(&spec)
		if errs.FieldsOf(spec.Validate())[tc.field] == "" {
			t.Errorf("no refusal on %s (got %v)", tc.field, spec.Validate())
		}
	}
}

// TestGuardrailQuotesAreCut holds TruncateRunes and that a compiled check
// gives back its definition.
func TestGuardrailQuotesAreCut(t *testing.T) {
	if TruncateRunes("héllo", 5) != "héllo" || TruncateRunes("héllo wörld", 5) != "héllo…" {
		t.Fatalf("TruncateRunes: %q", TruncateRunes("héllo wörld", 5))
	}
	g := Guardrail{Name: "short", Stages: []GuardrailStage{StageInput}, Mode: ModeMaxLength, MaxChars: 3}
	c, err := CompileGuardrail(g)
	if err != nil || c.Guardrail().Name != "short" || c.Guardrail().MaxChars != 3 {
		t.Fatalf("compiled %+v, %v", c, err)
	}
}

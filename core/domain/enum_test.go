package domain

import (
	"slices"
	"testing"
)

// values is an enum's Values beside the constants the package declares
// for it.
type values struct {
	name   string
	listed []string
	consts []string
	known  func(string) bool
}

func enumOf[T Enum](name string, consts ...T) values {
	var zero T
	out := values{name: name, listed: zero.Values(), known: func(s string) bool { return Known(T(s)) }}
	for _, c := range consts {
		out.consts = append(out.consts, string(c))
	}
	return out
}

// TestEveryEnumListsExactlyItsConstants holds the one-list promise: each
// enum's Values (what validation and the API document read) is exactly
// its declared constants, without repeats, and Known accepts those and
// nothing else.
func TestEveryEnumListsExactlyItsConstants(t *testing.T) {
	for _, e := range []values{
		enumOf("HandoffInputFilter", HandoffKeepAll, HandoffRemoveAllTools),
		enumOf("ToolNotFoundBehavior", ToolNotFoundFeedBack, ToolNotFoundError),
		enumOf("ReasoningItemIDPolicy", ReasoningIDDefault, ReasoningIDPreserve, ReasoningIDOmit),
		enumOf("CompactionMode", CompactionDefault, CompactionSummary, CompactionReset, CompactionHybrid),
		enumOf("ReasoningEffort", "", EffortMinimal, EffortLow, EffortMedium, EffortHigh),
		enumOf[ReasoningSummary]("ReasoningSummary", "", "auto", "concise", "detailed"),
		enumOf[Verbosity]("Verbosity", "", "low", "medium", "high"),
		enumOf("RunStatus", RunRunning, RunInterrupted, RunCompleted, RunError, RunCancelled),
		enumOf("CancelMode", CancelAbort, CancelGraceful),
		enumOf("QueueMode", QueueSteer, QueueNextTurn, QueueFollowUp),
		enumOf("ApprovalScope", ScopeOnce, ScopeSame, ScopeAll),
		enumOf("Role", RoleAdmin, RoleMember),
		enumOf("Scope", ScopePrivate, ScopeGlobal),
		enumOf("GuardrailStage", StageInput, StageOutput, StageToolInput, StageToolOutput),
		enumOf("GuardrailMode", ModeRegex, ModeMaxLength),
		enumOf("TokenKind", TokenSession, TokenPersonal, TokenLaunch, TokenStatic),
		enumOf("SettingKind", SettingString, SettingText, SettingInt, SettingBool, SettingURL),
		enumOf("MCPAuthMode", MCPAuthHeader, MCPAuthOAuth),
		enumOf("MCPStatus", MCPDisabled, MCPConnecting, MCPAuthorizing, MCPNeedsAuth, MCPDisconnected, MCPConnected),
		enumOf("TaskKind", TaskAgent, TaskWorkflow),
		enumOf("TaskStatus", TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled),
		enumOf("TriggerKind", TriggerCron, TriggerWebhook),
		enumOf("TriggerTarget", TargetWorkflow, TargetAgent),
	} {
		if got, want := slices.Sorted(slices.Values(e.listed)), slices.Sorted(slices.Values(e.consts)); !slices.Equal(got, want) {
			t.Errorf("%s lists %q, its constants are %q", e.name, e.listed, e.consts)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(e.listed)))) != len(e.listed) {
			t.Errorf("%s lists a value twice: %q", e.name, e.listed)
		}
		for _, c := range e.consts {
			if !e.known(c) {
				t.Errorf("%s does not know its constant %q", e.name, c)
			}
		}
		if e.known("bogus") {
			t.Errorf("%s knows a value it does not list", e.name)
		}
	}
}

// TestOrListSpellsTheNonEmptyValues holds the message form of an enum.
func TestOrListSpellsTheNonEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"", "once"}, "once"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"", "a", "b", "c"}, "a, b or c"},
	} {
		if got := OrList(tc.in); got != tc.want {
			t.Errorf("OrList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if ScopeOnce.Values()[0] != "once" || OrList(ScopeOnce.Values()) != "once, same or all" {
		t.Fatalf("the approval scopes read %q", OrList(ScopeOnce.Values()))
	}
}

package domain

import (
	"slices"
	"strings"
)

// Enums: every closed set of wire strings is a string type whose Values
// method lists it. Validation (Known) and the API document (the HTTP edge
// reads Values by reflection) use that one list, so they cannot disagree.

// Enum is a string type with a closed set of values.
type Enum interface {
	~string
	Values() []string
}

// Known reports whether v is one of its type's values.
func Known[T Enum](v T) bool { return slices.Contains(v.Values(), string(v)) }

// OrList spells an enum's non-empty values as "a, b or c" for a message.
func OrList(values []string) string {
	values = slices.DeleteFunc(slices.Clone(values), func(s string) bool { return s == "" })
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// Item types the runner reads; the set of stored item types is open (an
// unknown one is kept and sent back as it came).
const (
	ItemMessage            = "message"
	ItemFunctionCall       = "function_call"
	ItemFunctionCallOutput = "function_call_output"
	ItemReasoning          = "reasoning"
)

// HandoffInputFilter is what the next agent sees of the history on a
// handoff.
type HandoffInputFilter string

// The handoff filters: everything, or the history without tool calls.
const (
	HandoffKeepAll        HandoffInputFilter = ""
	HandoffRemoveAllTools HandoffInputFilter = "remove_all_tools"
)

// Values lists the handoff filters.
func (HandoffInputFilter) Values() []string { return []string{"", "remove_all_tools"} }

// ToolNotFoundBehavior is what a call of an unknown tool does.
type ToolNotFoundBehavior string

// The behaviors: tell the model, or end the run.
const (
	ToolNotFoundFeedBack ToolNotFoundBehavior = ""
	ToolNotFoundError    ToolNotFoundBehavior = "error"
)

// Values lists the behaviors.
func (ToolNotFoundBehavior) Values() []string { return []string{"", "error"} }

// ReasoningItemIDPolicy is how reasoning items' ids are sent back.
type ReasoningItemIDPolicy string

// The policies.
const (
	ReasoningIDDefault  ReasoningItemIDPolicy = ""
	ReasoningIDPreserve ReasoningItemIDPolicy = "preserve"
	ReasoningIDOmit     ReasoningItemIDPolicy = "omit"
)

// Values lists the policies.
func (ReasoningItemIDPolicy) Values() []string { return []string{"", "preserve", "omit"} }

// CompactionMode is how a long session is folded.
type CompactionMode string

// The modes.
const (
	CompactionDefault CompactionMode = ""
	CompactionSummary CompactionMode = "summary"
	CompactionReset   CompactionMode = "reset"
	CompactionHybrid  CompactionMode = "hybrid"
)

// Values lists the modes.
func (CompactionMode) Values() []string { return []string{"", "summary", "reset", "hybrid"} }

// ReasoningEffort is how hard a reasoning model thinks.
type ReasoningEffort string

// The efforts; empty leaves the provider's default.
const (
	EffortMinimal ReasoningEffort = "minimal"
	EffortLow     ReasoningEffort = "low"
	EffortMedium  ReasoningEffort = "medium"
	EffortHigh    ReasoningEffort = "high"
)

// Values lists the efforts (and empty).
func (ReasoningEffort) Values() []string { return []string{"", "minimal", "low", "medium", "high"} }

// ReasoningSummary is how much of its reasoning a model summarizes.
type ReasoningSummary string

// Values lists the summaries (and empty).
func (ReasoningSummary) Values() []string { return []string{"", "auto", "concise", "detailed"} }

// Verbosity is how long a model's answers run.
type Verbosity string

// Values lists the verbosities (and empty).
func (Verbosity) Values() []string { return []string{"", "low", "medium", "high"} }

// The tool choices besides a tool's name.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// Values lists the run statuses.
func (RunStatus) Values() []string {
	return []string{string(RunRunning), string(RunInterrupted), string(RunCompleted), string(RunError), string(RunCancelled)}
}

// CancelMode is how a run is stopped.
type CancelMode string

// Values lists the cancel modes.
func (CancelMode) Values() []string { return []string{string(CancelAbort), string(CancelGraceful)} }

// QueueMode is when injected input reaches a run.
type QueueMode string

// Values lists the queues.
func (QueueMode) Values() []string {
	return []string{string(QueueSteer), string(QueueNextTurn), string(QueueFollowUp)}
}

// ApprovalScope is how far an approval of exec_command extends.
type ApprovalScope string

// Values lists the scopes.
func (ApprovalScope) Values() []string {
	return []string{string(ScopeOnce), string(ScopeSame), string(ScopeAll)}
}

// Values lists the roles.
func (Role) Values() []string { return []string{string(RoleAdmin), string(RoleMember)} }

// Values lists the scopes.
func (Scope) Values() []string { return []string{string(ScopePrivate), string(ScopeGlobal)} }

// Values lists the stages.
func (GuardrailStage) Values() []string {
	out := make([]string, len(GuardrailStages))
	for i, s := range GuardrailStages {
		out[i] = string(s)
	}
	return out
}

// Values lists the modes.
func (GuardrailMode) Values() []string { return []string{string(ModeRegex), string(ModeMaxLength)} }

// Values lists the token kinds.
func (TokenKind) Values() []string {
	return []string{string(TokenSession), string(TokenPersonal), string(TokenLaunch), string(TokenStatic)}
}

// Values lists the setting kinds.
func (SettingKind) Values() []string {
	return []string{string(SettingString), string(SettingText), string(SettingInt), string(SettingBool), string(SettingURL)}
}

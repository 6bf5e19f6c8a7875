package transcript

import (
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
)

// Display kinds of the notes that record how a run ended without completing.
const (
	displayRunError     = "run_error"
	displayRunCancelled = "run_cancelled"
	displayStopped      = "stopped" // a partial answer a cancel cut short
)

// EndingNote records how a run that did not complete ended — the error or
// the cancellation the live stream announced — so a reload shows it too.
// The model never sees it. title "" gives the usual one.
func EndingNote(runID string, status domain.RunStatus, code, title, text string, extra map[string]string) domain.Entry {
	d := &domain.Display{Kind: displayRunCancelled, Title: "Cancelled", Extra: map[string]string{"code": code}}
	if status == domain.RunError {
		d.Kind, d.Title, d.IsError = displayRunError, "The run failed", true
	}
	if title != "" {
		d.Title = title
	}
	for k, v := range extra {
		d.Extra[k] = v
	}
	return domain.Entry{Kind: domain.KindAnnotation, RunID: runID, Text: text, Display: d}
}

// cancelReasons say in words why a run was cancelled.
var cancelReasons = map[string]string{
	"stopped":                        "Stopped before it finished.",
	domain.CancelServerShutdown:      "The server shut down during this run.",
	"superseded":                     "A new message arrived before a decision on its approvals.",
	"expired":                        "Its approval waited too long without a decision.",
	"session_deleted":                "Its conversation was deleted.",
	"account_deleted":                "Its owner's account was deleted.",
	domain.CancelDatabaseUnreachable: "The server lost its database, so it stopped this run before another server could take it over.",
}

// CancelReason says in words why a run was cancelled for reason ("" for
// a reason without words).
func CancelReason(reason string) string { return cancelReasons[reason] }

// CutShort is the entry that keeps an answer a run did not finish: for the
// person and for the model's next turn, marked as cut short.
func CutShort(runID, text, why string) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: runID,
		Item:    domain.AssistantMessage("", text),
		Display: &domain.Display{Kind: displayStopped, Title: "Stopped", Summary: why}}
}

// NoteFor is the ending note of a run that ended with status, code and
// msg, its final event the one given (an error's names the guardrail that
// tripped); ok is false for an ending that needs none (a completion).
func NoteFor(runID string, status domain.RunStatus, code, msg string, final domain.Event) (domain.Entry, bool) {
	switch status {
	case domain.RunError:
		extra := map[string]string{}
		var p domain.ErrorPayload
		if json.Unmarshal(final.Payload, &p) == nil && p.Guardrail != "" {
			extra["guardrail"], extra["stage"] = p.Guardrail, p.Stage
		}
		return EndingNote(runID, status, code, "", msg, extra), true
	case domain.RunCancelled:
		text := CancelReason(code)
		if text == "" {
			text = "Cancelled (" + code + ")."
		}
		return EndingNote(runID, status, code, "", text, nil), true
	}
	return domain.Entry{}, false
}

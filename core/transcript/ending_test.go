package transcript

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func TestAnEndingNoteSaysHowTheRunEnded(t *testing.T) {
	failed := EndingNote("r", domain.RunError, "guardrail_tripwire", "", "It tripped.", map[string]string{"stage": "input"})
	if d := failed.Display; d.Kind != "run_error" || !d.IsError || d.Title != "The run failed" || d.Extra["code"] != "guardrail_tripwire" ||
		d.Extra["stage"] != "input" || failed.Kind != domain.KindAnnotation || failed.Text != "It tripped." {
		t.Fatalf("a failure's note is %+v / %+v", failed, failed.Display)
	}
	expired := EndingNote("r", domain.RunCancelled, "expired", "Approval expired", CancelReason("expired"), nil)
	if d := expired.Display; d.Kind != "run_cancelled" || d.IsError || d.Title != "Approval expired" ||
		!strings.Contains(expired.Text, "waited too long") {
		t.Fatalf("a cancel's note is %+v / %+v", expired, expired.Display)
	}
	if CancelReason("no such reason") != "" {
		t.Fatal("an unknown reason has words")
	}
	cut := CutShort("r", "half an ans", "The answer was cut short.")
	if cut.Source != domain.SourceModel || cut.Display.Kind != "stopped" || !strings.Contains(string(cut.Item), "half an ans") {
		t.Fatalf("a cut-short answer is %+v", cut)
	}
}

func TestTheNoteForAnEndingNamesItsGuardrailOrReason(t *testing.T) {
	trip := domain.NewEvent(domain.EventError, domain.ErrorPayload{RunID: "r", Code: domain.CodeGuardrail, Guardrail: "no-secrets", Stage: "output"})
	note, ok := NoteFor("r", domain.RunError, domain.CodeGuardrail, "It tripped.", trip)
	if d := note.Display; !ok || note.Text != "It tripped." || d.Extra["guardrail"] != "no-secrets" || d.Extra["stage"] != "output" {
		t.Fatalf("a tripped guardrail's note is %+v / %+v", note, note.Display)
	}
	note, ok = NoteFor("r", domain.RunCancelled, "gone_fishing", "", domain.Event{})
	if !ok || note.Text != "Cancelled (gone_fishing)." {
		t.Fatalf("a cancel without words notes %q", note.Text)
	}
	if note, ok = NoteFor("r", domain.RunCancelled, domain.CancelServerShutdown, "", domain.Event{}); !ok || note.Text != CancelReason(domain.CancelServerShutdown) {
		t.Fatalf("a cancel with words notes %q", note.Text)
	}
	if _, ok := NoteFor("r", domain.RunCompleted, "", "", domain.Event{}); ok {
		t.Fatal("a completion has an ending note")
	}
}

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

package approvals

import (
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

func TestAPauseFilesOneApprovalPerGatedCall(t *testing.T) {
	run := domain.Run{ID: "r1", SessionID: "s1", OwnerID: "u1"}
	calls := []domain.Item{{CallID: "c1", Name: "ls"}, {CallID: "c2", Name: "rm", Arguments: `{"path":"x"}`}}
	n := 0
	rows := Rows(run, calls, []bool{false, true}, time.Unix(5, 0), func() string { n++; return "a1" })
	if len(rows) != 1 || n != 1 || rows[0].ToolCallID != "c2" || rows[0].Arguments != `{"path":"x"}` || rows[0].OwnerID != "u1" ||
		rows[0].RunID != "r1" || rows[0].SessionID != "s1" {
		t.Fatalf("Rows = %+v", rows)
	}
}

func TestADecidedTurnSplitsApprovalsFromRejections(t *testing.T) {
	d := Decided{{ToolCallID: "c1", Status: domain.ApprovalApproved}, {ToolCallID: "c2", Status: domain.ApprovalRejected, Reason: "no"}}
	if ok := d.Approved(); len(ok) != 1 || !ok["c1"] {
		t.Fatalf("Approved = %v", ok)
	}
	if no := d.Rejections(); len(no) != 1 || no["c2"] != "no" {
		t.Fatalf("Rejections = %v", no)
	}
}

func TestAnEndedPauseAnswersEveryWaitingCall(t *testing.T) {
	entries := NotRun("r1", []domain.Item{{CallID: "c1", Name: "ls"}, {CallID: "c2", Name: "rm"}}, "expired")
	if len(entries) != 2 {
		t.Fatalf("NotRun = %+v", entries)
	}
	for i, e := range entries {
		it := domain.ParseItem(e.Item)
		if it.Kind() != domain.ItemFunctionCallOutput || it.CallID != []string{"c1", "c2"}[i] || e.RunID != "r1" ||
			e.Display == nil || e.Display.Kind != "not_run" || e.Display.Summary != "the approval expired" {
			t.Fatalf("entry %d = %+v", i, e)
		}
	}
}

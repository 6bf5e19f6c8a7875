package sessions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func raws(items ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, s := range items {
		out[i] = json.RawMessage(s)
	}
	return out
}

const (
	userItem = `{"type":"message","role":"user","content":"hi"}`
	callItem = `{"type":"function_call","call_id":"c","name":"t","arguments":"{}"}`
	outItem  = `{"type":"function_call_output","call_id":"c","output":"ok"}`
	reasItem = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"hm"}]}`
)

func TestLimitHistoryNeverStartsOnAnOrphanOutput(t *testing.T) {
	in := raws(userItem, callItem, outItem, userItem)
	if got := LimitHistory(in, 0); len(got) != 4 {
		t.Fatalf("0 keeps all, got %d", len(got))
	}
	if got := LimitHistory(in, 3); len(got) != 3 || domain.ParseItem(got[0]).Kind() != "function_call" {
		t.Fatalf("limit 3 = %s", got)
	}
	// Cutting between a call and its output drops the orphaned output too.
	if got := LimitHistory(in, 2); len(got) != 1 || domain.ParseItem(got[0]).Kind() != "message" {
		t.Fatalf("limit 2 = %s", got)
	}
}

func TestInputFilters(t *testing.T) {
	in := raws(userItem, reasItem, callItem, outItem)
	got := WithoutReasoningIDs(in)
	if strings.Contains(string(got[1]), "rs_1") || !strings.Contains(string(got[1]), "summary") || string(got[0]) != userItem {
		t.Fatalf("reasoning ids: %s", got)
	}
	if strings.Contains(string(in[1]), `"id"`) == false {
		t.Fatal("the filter changed its input")
	}
	if got := WithoutTools(in); len(got) != 2 || len(in) != 4 {
		t.Fatalf("remove_all_tools = %s", got)
	}
}

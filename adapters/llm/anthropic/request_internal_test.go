package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

func TestACompactedHistoryStillOpensOnAUserTurn(t *testing.T) {
	system, msgs := translateInput(ports.ModelRequest{Input: []json.RawMessage{
		domain.TextMessage("system", "input_text", "Summary of the earlier conversation:\nthey asked"),
		domain.AssistantMessage("", "kept answer"),
		domain.TextMessage("user", "input_text", "next question"),
	}})
	if len(system) != 1 || len(msgs) != 3 || msgs[0].Role != anthropic.MessageParamRoleUser ||
		msgs[0].Content[0].OfText.Text != foldedOpening || msgs[1].Role != anthropic.MessageParamRoleAssistant {
		t.Fatalf("system %d, messages %+v", len(system), msgs)
	}
	// A history that opens on the person is left as it is.
	_, msgs = translateInput(ports.ModelRequest{Input: []json.RawMessage{domain.TextMessage("user", "input_text", "hi")}})
	if len(msgs) != 1 || msgs[0].Content[0].OfText.Text != "hi" {
		t.Fatalf("messages %+v", msgs)
	}
}

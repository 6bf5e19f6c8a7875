package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

func TestChatGPTStoreKeepsTheContract(t *testing.T) {
	cfg := &porttest.ConfigStore{}
	storetest.ChatGPTSignIns(t, cfg, &porttest.ChatGPTStore{Config: cfg}, "ann")
}

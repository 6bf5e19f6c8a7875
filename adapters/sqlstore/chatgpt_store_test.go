package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

func TestChatGPTStoreKeepsTheContract(t *testing.T) {
	db := openTemp(t)
	ann := user("ann", domain.RoleMember)
	if err := db.CreateUser(context.Background(), ann); err != nil {
		t.Fatal(err)
	}
	storetest.ChatGPTSignIns(t, db, db, ann.ID)
}

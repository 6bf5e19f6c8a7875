package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// An attachment lives while a session's entry refers to it: storing the
// entry binds it (a fork's copy too), deleting every such session frees it,
// and only then does the orphan sweep take it.
func TestAttachmentsLiveWhileASessionHoldsThem(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	u := user("owner", domain.RoleMember)
	db.CreateUser(ctx, u)
	mkAttachment := func(id string) domain.Attachment {
		a := domain.Attachment{ID: id, OwnerID: u.ID, Name: id + ".png", Mime: "image/png", Size: 3, Width: 1, Height: 1, CreatedAt: when}
		if err := db.CreateAttachment(ctx, a, []byte{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	sent, unsent := mkAttachment("sent"), mkAttachment("unsent")
	msg := domain.Entry{ID: "u1", Kind: domain.KindItem, Source: domain.SourceUser, RowID: "r1", Seq: 1, CreatedAt: when,
		Item: domain.UserMessage("look", []domain.Attachment{sent, {ID: "never-uploaded"}})}
	for _, id := range []string{"s1", "fork"} {
		s := domain.Session{ID: id, OwnerID: u.ID, CreatedAt: when, UpdatedAt: when}
		msg.RowID = "r-" + id // row ids are unique across sessions
		if err := db.CreateSessionWithEntries(ctx, s, []domain.Entry{msg}, []domain.EntryMeta{domain.MetaOf(msg, "")}); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := db.FindAttachment(ctx, "sent"); err != nil || a != sent {
		t.Fatalf("find = %+v, %v", a, err)
	}
	if data, err := db.AttachmentData(ctx, "sent"); err != nil || len(data) != 3 {
		t.Fatalf("data = %v, %v", data, err)
	}
	later := when.Add(48 * time.Hour)
	prune := func(want int) {
		t.Helper()
		if n, err := db.PruneAttachments(ctx, later); err != nil || n != want {
			t.Fatalf("pruned %d (%v), want %d", n, err, want)
		}
	}
	// Nothing younger than the cutoff goes, held or not.
	if n, _ := db.PruneAttachments(ctx, when); n != 0 {
		t.Fatalf("pruned %d before the grace ended", n)
	}
	prune(1) // the unsent one
	if _, err := db.FindAttachment(ctx, unsent.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("unsent survived: %v", err)
	}
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	prune(0) // the fork still holds it
	if err := db.DeleteSession(ctx, "fork"); err != nil {
		t.Fatal(err)
	}
	prune(1)
	if _, err := db.AttachmentData(ctx, "sent"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("sent survived every session: %v", err)
	}
}

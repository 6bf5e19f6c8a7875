package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func TestSSHHostKeyPinOutlivesTheProcessAndOnlyResetMovesIt(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	const host = "ssh://me@box:22"
	created := time.UnixMilli(1_700_000_000_000).UTC()
	sb := domain.Sandbox{ID: "sb1", Name: "remote", Type: domain.SandboxDocker, Revision: 1, CreatedAt: created, UpdatedAt: created,
		Docker: &domain.DockerConfig{Host: host, Image: "img"}}
	write := func(fn func(tx ports.ProjectTx) error) {
		t.Helper()
		if err := db.InProjectTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) })
	if got, _ := db.FindSandbox(ctx, sb.ID); !got.SSHHostKey.IsZero() {
		t.Fatalf("a new sandbox has a pin: %+v", got.SSHHostKey)
	}

	first := domain.SSHHostKey{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFirst", PinnedAt: created.Add(time.Minute + 123*time.Microsecond)}
	second := domain.SSHHostKey{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISecond", PinnedAt: created.Add(time.Hour)}
	pin := func(host string, k domain.SSHHostKey) (domain.SSHHostKey, error) {
		return db.PinSSHHostKey(ctx, sb.ID, host, k)
	}
	want := domain.SSHHostKey{Key: first.Key, PinnedAt: created.Add(time.Minute)} // stored to the millisecond
	if got, err := pin(host, first); err != nil || got != want {
		t.Fatalf("first pin = %+v, %v; want %+v", got, err, want)
	}
	// The first key stays: a later one is answered with it, to be refused.
	if got, err := pin(host, second); err != nil || got != want {
		t.Fatalf("second key = %+v, %v; want the first pin", got, err)
	}

	// A restart reads it back; an admin's edit neither moves nor clears it,
	// and pinning moved no revision.
	db = reopen(t, db)
	got, err := db.FindSandbox(ctx, sb.ID)
	if err != nil || got.SSHHostKey != want || got.Revision != 1 {
		t.Fatalf("after a restart = %+v, %v", got, err)
	}
	edited := got
	edited.Docker = &domain.DockerConfig{Host: host, Image: "other"}
	edited.SSHHostKey = domain.SSHHostKey{}
	edited.Revision = 2
	write(func(tx ports.ProjectTx) error { return tx.UpdateSandbox(ctx, edited) })
	if listed, _ := db.ListSandboxes(ctx); len(listed) != 1 || listed[0].SSHHostKey != want || listed[0].Revision != 2 {
		t.Fatalf("after an edit = %+v", listed)
	}

	// A connection made for another host pins nothing; nor for no sandbox.
	if _, err := pin("ssh://me@elsewhere:22", second); !errs.Is(err, errs.Conflict) {
		t.Fatalf("pin for a stale host: %v, want conflict", err)
	}
	if _, err := db.PinSSHHostKey(ctx, "nope", host, second); !errs.Is(err, errs.NotFound) {
		t.Fatalf("pin for no sandbox: %v, want not_found", err)
	}

	// A reset forgets it; the next key met is pinned.
	write(func(tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, sb.ID) })
	if got, _ := db.FindSandbox(ctx, sb.ID); !got.SSHHostKey.IsZero() || got.Revision != 2 {
		t.Fatalf("after a reset = %+v", got)
	}
	if got, err := pin(host, second); err != nil || got != second {
		t.Fatalf("pin after a reset = %+v, %v; want %+v", got, err, second)
	}
	if err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, "nope") }); !errs.Is(err, errs.NotFound) {
		t.Fatalf("reset of no sandbox: %v, want not_found", err)
	}
}

package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The pin's promises are the contract in ports/storetest
// (project_contract_test.go); here, that a pin is kept across a restart.
func TestSSHHostKeyPinOutlivesTheProcess(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	const host = "ssh://me@box:22"
	sb := domain.Sandbox{ID: "sb1", Name: "remote", Type: domain.SandboxDocker, Revision: 1, CreatedAt: when, UpdatedAt: when,
		Docker: &domain.DockerConfig{Host: host, Image: "img"}}
	if err := db.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) }); err != nil {
		t.Fatal(err)
	}
	first := domain.SSHHostKey{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFirst", PinnedAt: when.Add(time.Minute + 123*time.Microsecond)}
	want := domain.SSHHostKey{Key: first.Key, PinnedAt: when.Add(time.Minute)} // stored to the millisecond
	if got, err := db.PinSSHHostKey(ctx, sb.ID, host, first); err != nil || got != want {
		t.Fatalf("first pin = %+v, %v; want %+v", got, err, want)
	}
	db = reopen(t, db)
	if got, err := db.FindSandbox(ctx, sb.ID); err != nil || got.SSHHostKey != want || got.Revision != 1 {
		t.Fatalf("after a restart = %+v, %v", got, err)
	}
	second := domain.SSHHostKey{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAISecond", PinnedAt: when.Add(time.Hour)}
	if got, err := db.PinSSHHostKey(ctx, sb.ID, host, second); err != nil || got != want {
		t.Fatalf("a key met after the restart = %+v, %v; want the pin %+v", got, err, want)
	}
}

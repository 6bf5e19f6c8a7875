package porttest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestProjectStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sessions := &porttest.SessionStore{}
	s := &porttest.ProjectStore{Sessions: sessions}
	write := func(fn func(tx ports.ProjectTx) error) error { return s.InProjectTx(ctx, fn) }
	sb := domain.Sandbox{ID: "sb1", Name: "Box", Type: domain.SandboxDocker, Revision: 1,
		Docker: &domain.DockerConfig{Image: "img", Host: "ssh://u@h"}}
	if err := write(func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) }); err != nil {
		t.Fatal(err)
	}
	dup := sb
	dup.ID, dup.Name = "sb2", "BOX"
	if err := write(func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, dup) }); !errs.Is(err, errs.Conflict) {
		t.Errorf("a name differing in case: %v, want conflict", err)
	}
	// A read hands out a copy: changing it changes nothing stored.
	got, _ := s.FindSandbox(ctx, "sb1")
	got.Docker.Image = "changed"
	if again, _ := s.FindSandbox(ctx, "sb1"); again.Docker.Image != "img" {
		t.Errorf("a caller's change reached the store: %q", again.Docker.Image)
	}

	key := domain.SSHHostKey{Key: "ssh-ed25519 AAAA"}
	if _, err := s.PinSSHHostKey(ctx, "sb1", "ssh://other@h", key); !errs.Is(err, errs.Conflict) {
		t.Errorf("pinning for another host: %v, want conflict", err)
	}
	if k, err := s.PinSSHHostKey(ctx, "sb1", "ssh://u@h", key); err != nil || k.Key != key.Key {
		t.Fatalf("pin = %+v, %v", k, err)
	}
	if k, _ := s.PinSSHHostKey(ctx, "sb1", "ssh://u@h", domain.SSHHostKey{Key: "ssh-rsa BBBB"}); k.Key != key.Key {
		t.Errorf("a second key replaced the pin: %q", k.Key)
	}
	upd := sb
	upd.Revision, upd.Prompt = 2, "be nice"
	if err := write(func(tx ports.ProjectTx) error { return tx.UpdateSandbox(ctx, upd) }); err != nil {
		t.Fatal(err)
	}
	if err := write(func(tx ports.ProjectTx) error { return tx.UpdateSandbox(ctx, upd) }); !errs.Is(err, errs.Conflict) {
		t.Errorf("a stale revision: %v, want conflict", err)
	}
	if got, _ := s.FindSandbox(ctx, "sb1"); got.SSHHostKey.Key != key.Key || got.Prompt != "be nice" {
		t.Errorf("after update = %+v: the pin must stay", got)
	}

	p := domain.Project{ID: "p1", OwnerID: "u1", Name: "Proj", SandboxID: "sb1", Revision: 1, Generation: 1}
	if err := write(func(tx ports.ProjectTx) error { return tx.InsertProject(ctx, p) }); err != nil {
		t.Fatal(err)
	}
	other := p
	other.ID, other.Name = "p2", "proj"
	if err := write(func(tx ports.ProjectTx) error { return tx.InsertProject(ctx, other) }); !errs.Is(err, errs.Conflict) {
		t.Errorf("the owner's name again: %v, want conflict", err)
	}
	other.OwnerID = "u2"
	if err := write(func(tx ports.ProjectTx) error { return tx.InsertProject(ctx, other) }); err != nil {
		t.Errorf("another owner's same name: %v", err)
	}
	if err := write(func(tx ports.ProjectTx) error { return tx.DeleteSandbox(ctx, "sb1") }); !errs.Is(err, errs.Conflict) {
		t.Errorf("deleting a sandbox projects live on: %v, want conflict", err)
	}
	if err := write(func(tx ports.ProjectTx) error { return tx.BumpGenerations(ctx, "sb1") }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindProject(ctx, "p1"); got.Generation != 2 {
		t.Errorf("generation after a bump = %d", got.Generation)
	}
	if list, _ := s.ListProjects(ctx, ""); len(list) != 2 || list[0].ID != "p2" {
		t.Errorf("every project, newest first = %+v", list)
	}

	// Binding: a failed transaction binds nothing; a bound session stays.
	_ = sessions.CreateSession(ctx, domain.Session{ID: "s1", OwnerID: "u1"})
	boom := errors.New("boom")
	err := write(func(tx ports.ProjectTx) error {
		if _, won, err := tx.BindSession(ctx, "s1", "p1"); err != nil || !won {
			t.Errorf("bind = %v, %v", won, err)
		}
		if n, _ := tx.SessionCounts(ctx, []string{"p1"}); n["p1"] != 1 {
			t.Errorf("the transaction does not see its own bind: %v", n)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n, _ := s.SessionCounts(ctx, []string{"p1"}); n["p1"] != 0 {
		t.Errorf("a rolled-back bind counts: %v", n)
	}
	var bound string
	var won bool
	_ = write(func(tx ports.ProjectTx) (err error) { bound, won, err = tx.BindSession(ctx, "s1", "p1"); return })
	if bound != "p1" || !won {
		t.Errorf("bind = %q, %v", bound, won)
	}
	_ = write(func(tx ports.ProjectTx) (err error) { bound, won, err = tx.BindSession(ctx, "s1", "p2"); return })
	if bound != "p1" || won {
		t.Errorf("a second bind = %q, %v; want the first project kept", bound, won)
	}
	if sess, _ := sessions.FindSession(ctx, "s1"); sess.ProjectID != "p1" {
		t.Errorf("the session row binds %q", sess.ProjectID)
	}
	if err := write(func(tx ports.ProjectTx) error { _, _, err := tx.BindSession(ctx, "nope", "p1"); return err }); !errs.Is(err, errs.NotFound) {
		t.Errorf("binding a missing session: %v, want not_found", err)
	}
	if err := (&porttest.ProjectStore{}).InProjectTx(ctx, func(tx ports.ProjectTx) error {
		_, _, err := tx.BindSession(ctx, "s1", "p1")
		return err
	}); !errs.Is(err, errs.NotFound) {
		t.Errorf("binding without a session store: %v, want not_found", err)
	}
}

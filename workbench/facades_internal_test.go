package workbench

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// What a program does for a person is recorded as that person's, unless
// the program named an actor itself.
func TestFacadesActForTheirPrincipal(t *testing.T) {
	p := domain.Principal{User: domain.User{ID: "u1", Username: "ada"}}
	if a := ports.ActorOf(actedBy(context.Background(), p)); a.Kind != domain.ActorUser || a.ID != "u1" || a.Name != "ada" {
		t.Fatalf("the actor of a bare context: %+v", a)
	}
	named := ports.WithActor(context.Background(), domain.Actor{Kind: domain.ActorTrigger, ID: "t1"})
	if a := ports.ActorOf(actedBy(named, p)); a.Kind != domain.ActorTrigger || a.ID != "t1" {
		t.Fatalf("the program's own actor was replaced: %+v", a)
	}
}

package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin  = domain.Principal{User: domain.User{ID: "a", Username: "ada", Role: domain.RoleAdmin}}
	member = domain.Principal{User: domain.User{ID: "m", Username: "max", Role: domain.RoleMember}}
)

// A record staged with Change carries the actor its context names, the
// fields by name, sorted once each; Drop withdraws one.
func TestChangeStagesTheActorsRecord(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ctx := ports.WithActor(context.Background(), domain.UserActor(admin.User, "10.0.0.9"))
	ctx = audit.Change(ctx, at, "provider.update", audit.Object{Kind: "provider", ID: "p1", Name: "OpenAI"}, "name", "api_key", "name")
	got := ports.StagedAudit(ctx).Pending()
	if len(got) != 1 || got[0].Actor.Name != "ada" || got[0].Actor.Address != "10.0.0.9" || got[0].Outcome != domain.AuditSuccess ||
		len(got[0].Fields) != 2 || got[0].Fields[0] != "api_key" || got[0].Fields[1] != "name" || !got[0].At.Equal(at) {
		t.Fatalf("staged %+v", got)
	}
	_, rec := audit.Stage(context.Background(), at, "x.update", audit.Object{Kind: "x"})
	if rec.Actor.Kind != domain.ActorSystem {
		t.Fatalf("without an actor the record is the system's: %+v", rec.Actor)
	}
	audit.Drop(rec)
	if rec.Action != "" {
		t.Fatal("a dropped record keeps its action")
	}
}

// Only admins list; refusals are appended with their reason; the
// retention prunes by the clock and 0 keeps everything.
func TestTheServiceListsForAdminsAndPrunesByItsRetention(t *testing.T) {
	ctx := context.Background()
	store := &porttest.AuditStore{}
	clock := porttest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	days := 30
	svc := audit.New(store, func(context.Context) (int, error) { return days, nil }, clock)

	if err := svc.Refused(ctx, "signin", audit.Object{Kind: "user", Name: "eve"}, "password", "invalid username or password"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(40 * 24 * time.Hour)
	if err := svc.Refused(ctx, "signin", audit.Object{Kind: "user", Name: "eve"}, "password", "invalid username or password"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.List(ctx, member, domain.AuditQuery{Limit: 10}); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member listed the log: %v", err)
	}
	if _, err := svc.List(ctx, admin, domain.AuditQuery{Limit: 10_000}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a page past the limit: %v", err)
	}
	recs, err := svc.List(ctx, admin, domain.AuditQuery{Limit: 10})
	if err != nil || len(recs) != 2 || recs[0].Outcome != domain.AuditFailure || recs[0].Method != "password" || recs[0].Reason == "" {
		t.Fatalf("listed %+v, %v", recs, err)
	}
	days = 0
	if n, err := svc.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("retention 0 pruned %d, %v", n, err)
	}
	days = 30
	if n, err := svc.Prune(ctx); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want the record 40 days old", n, err)
	}
	var exported int
	if err := svc.Export(ctx, admin, domain.AuditQuery{}, func(domain.AuditRecord) error { exported++; return nil }); err != nil || exported != 1 {
		t.Fatalf("exported %d, %v", exported, err)
	}
}

package approvals_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	alice = domain.Principal{User: domain.User{ID: "alice", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
)

// previewer draws a preview on its own tool's approvals, and fails on
// the tool named "broken", as a toolset whose preview cannot be drawn.
type previewer struct{}

func (previewer) Offer(context.Context, tools.Request) (tools.Offer, error) {
	return tools.Offer{}, nil
}
func (previewer) Call(context.Context, tools.RunCall, domain.Item) tools.Answer {
	return tools.Answer{}
}
func (previewer) Preview(_ context.Context, a *domain.Approval) error {
	switch a.ToolName {
	case "save_workflow":
		a.Preview = &domain.WorkflowPreview{}
	case "broken":
		return errors.New("cannot draw")
	}
	return nil
}

// gate is an approvals.Service on the porttest stores, the real sessions
// and settings services and a fake clock.
type gate struct {
	*approvals.Service
	runs     *porttest.RunStore
	sessions *porttest.SessionStore
	settings *settings.Service
	clock    *porttest.Clock
}

func newGate(t *testing.T) gate {
	t.Helper()
	runs := &porttest.RunStore{}
	sess := &porttest.SessionStore{Runs: runs}
	runs.Sessions = sess
	clock := porttest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := settings.New(&porttest.SettingStore{}, nil, clock)
	g := gate{runs: runs, sessions: sess, settings: st, clock: clock}
	g.Service = approvals.New(approvals.Deps{Store: runs, Settings: st, Clock: clock,
		Sessions: sessions.NewJournal(sessions.Deps{Store: sess, Runs: runs, Clock: clock}),
		Toolsets: []tools.Toolset{tools.Builtins{}, previewer{}}, Log: slog.New(slog.DiscardHandler)})
	for _, s := range []domain.Session{{ID: "sa", OwnerID: "alice"}, {ID: "sa2", OwnerID: "alice"}, {ID: "sb", OwnerID: "bob"}} {
		if err := sess.CreateSession(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// pause files calls as pending approvals of a new paused run of session
// sid; each call is {id, tool, arguments}, the approval's id "a-"+id.
func (g gate) pause(t *testing.T, runID, sid, owner string, calls ...[3]string) {
	t.Helper()
	ctx := context.Background()
	run := domain.Run{ID: runID, SessionID: sid, OwnerID: owner, Status: domain.RunRunning}
	if err := g.runs.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var rows []domain.Approval
	for _, c := range calls {
		rows = append(rows, domain.Approval{ID: "a-" + c[0], SessionID: sid, RunID: runID, OwnerID: owner,
			ToolCallID: c[0], ToolName: c[1], Arguments: c[2], CreatedAt: g.clock.Now()})
	}
	if err := g.runs.FileApprovals(ctx, rows, run, domain.PauseState{}); err != nil {
		t.Fatal(err)
	}
}

func ids(list []domain.Approval) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.ID)
	}
	return out
}

func TestListShowsTheCallersPendingApprovalsWithPreviews(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	g.pause(t, "r1", "sa", "alice", [3]string{"c1", "save_workflow", "{}"}, [3]string{"c2", "broken", "{}"})
	g.pause(t, "r2", "sa2", "alice", [3]string{"c3", tools.ExecCommand, `{"cmd":"ls"}`})
	g.pause(t, "r3", "sb", "bob", [3]string{"c4", tools.ExecCommand, `{"cmd":"ls"}`})

	one, err := g.List(ctx, alice, "sa")
	if err != nil || len(one) != 2 || one[0].ID != "a-c1" || one[1].ID != "a-c2" {
		t.Fatalf("List(sa) = %v, %v", ids(one), err)
	}
	if one[0].Preview == nil || one[1].Preview != nil {
		t.Fatalf("previews = %v, %v; want one drawn for save_workflow only (a failed one is left out)", one[0].Preview, one[1].Preview)
	}
	all, err := g.List(ctx, alice, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("List(all) = %v, %v; want alice's three", ids(all), err)
	}
	for _, a := range all {
		if a.OwnerID != "alice" {
			t.Fatalf("List(all) shows %s's approval %s", a.OwnerID, a.ID)
		}
	}
	for _, sid := range []string{"sb", "nope"} {
		if got, err := g.List(ctx, alice, sid); !errs.Is(err, errs.NotFound) || got != nil {
			t.Fatalf("List(%s) = %v, %v; want not_found", sid, ids(got), err)
		}
	}
}

func TestByCallFindsOnlyTheCallersPendingApproval(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	g.pause(t, "r1", "sa", "alice", [3]string{"c1", tools.ExecCommand, `{"cmd":"ls"}`})
	if a, err := g.ByCall(ctx, alice, "c1"); err != nil || a.ID != "a-c1" {
		t.Fatalf("ByCall = %+v, %v", a, err)
	}
	if _, err := g.ByCall(ctx, bob, "c1"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("ByCall by another user = %v; want not_found", err)
	}
}

func TestPendingChecksScopeOwnerAndStatus(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	g.pause(t, "r1", "sa", "alice", [3]string{"c1", tools.ExecCommand, `{"cmd":"ls"}`}, [3]string{"c2", "x", "{}"})
	a2, err := g.Pending(ctx, alice, "a-c2", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Record(ctx, a2, false, "", "no"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		p     domain.Principal
		id    string
		scope domain.ApprovalScope
		code  errs.Code
	}{
		{name: "pending, once", p: alice, id: "a-c1"},
		{name: "pending, same", p: alice, id: "a-c1", scope: domain.ScopeSame},
		{name: "pending, all", p: alice, id: "a-c1", scope: domain.ScopeAll},
		{name: "unknown scope", p: alice, id: "a-c1", scope: "forever", code: errs.Validation},
		{name: "unknown approval", p: alice, id: "a-zz", code: errs.NotFound},
		{name: "someone else's", p: bob, id: "a-c1", code: errs.NotFound},
		{name: "already decided", p: alice, id: "a-c2", code: errs.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := g.Pending(ctx, tc.p, tc.id, tc.scope)
			if tc.code != "" {
				if !errs.Is(err, tc.code) || a.ID != "" {
					t.Fatalf("Pending = %+v, %v; want %s", a, err, tc.code)
				}
				return
			}
			if err != nil || a.ID != tc.id || a.Status != domain.ApprovalPending {
				t.Fatalf("Pending = %+v, %v", a, err)
			}
		})
	}
}

func TestRecordDecidesAndExtendsTrustOnlyForApprovedShellCommands(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	g.pause(t, "r1", "sa", "alice",
		[3]string{"c1", tools.ExecCommand, `{"cmd":"go test"}`},
		[3]string{"c2", tools.ExecCommand, `{"cmd":"rm -rf /"}`},
		[3]string{"c3", "write_file", `{"cmd":"make"}`})
	decide := func(id string, approve bool, scope domain.ApprovalScope) []domain.Approval {
		t.Helper()
		a, err := g.Pending(ctx, alice, id, scope)
		if err != nil {
			t.Fatal(err)
		}
		all, err := g.Record(ctx, a, approve, scope, "because")
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	all := decide("a-c1", true, domain.ScopeSame)
	if len(all) != 3 || all[0].Status != domain.ApprovalApproved || all[0].Scope != string(domain.ScopeSame) ||
		all[0].DecidedAt == nil || !all[0].DecidedAt.Equal(g.clock.Now()) || all[1].Status != domain.ApprovalPending {
		t.Fatalf("after approving c1: %+v", all)
	}
	all = decide("a-c2", false, domain.ScopeAll)
	if all[1].Status != domain.ApprovalRejected || all[1].Reason != "because" {
		t.Fatalf("after rejecting c2: %+v", all[1])
	}
	decide("a-c3", true, domain.ScopeAll)

	tr := g.Trust()
	cmd := func(c string) domain.Item {
		return domain.Item{Name: tools.ExecCommand, Arguments: `{"cmd":"` + c + `"}`}
	}
	if !tr.Covers("sa", "r9", cmd("go test")) {
		t.Fatal("an approved command with scope same is not trusted in its session")
	}
	if tr.Covers("sa", "r9", cmd("rm -rf /")) {
		t.Fatal("a rejected command's scope all extended trust")
	}
	if tr.Covers("sa", "r9", cmd("make")) || tr.Covers("sa", "r9", domain.Item{Name: "write_file", Arguments: `{"cmd":"make"}`}) {
		t.Fatal("another tool's approval with scope all extended trust")
	}
	if tr.Covers("sa2", "r9", cmd("go test")) {
		t.Fatal("trust reached another session")
	}
}

func TestRecordRefusesTheResumingDecisionPastTheRunCap(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	if _, err := g.settings.Put(ctx, admin, settings.KeyMaxRunsPerUser, "1"); err != nil {
		t.Fatal(err)
	}
	g.pause(t, "r1", "sa", "alice", [3]string{"c1", tools.ExecCommand, `{"cmd":"ls"}`})
	if err := g.runs.CreateRun(ctx, domain.Run{ID: "busy", SessionID: "sa2", OwnerID: "alice", Status: domain.RunRunning}); err != nil {
		t.Fatal(err)
	}
	a, err := g.Pending(ctx, alice, "a-c1", domain.ScopeAll)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := g.Record(ctx, a, true, domain.ScopeAll, ""); !errs.Is(err, errs.RateLimited) || all != nil {
		t.Fatalf("Record past the cap = %v, %v; want rate_limited", ids(all), err)
	}
	if g.Trust().Trusted("sa", "r1", "anything") {
		t.Fatal("a refused decision extended trust")
	}
	if still, err := g.Pending(ctx, alice, "a-c1", ""); err != nil || still.Status != domain.ApprovalPending {
		t.Fatalf("after a refusal: %+v, %v; want the approval still pending", still, err)
	}
}

func TestExpiredIsOneApprovalPerRunPastTheTTL(t *testing.T) {
	g := newGate(t)
	ctx := context.Background()
	g.pause(t, "r1", "sa", "alice", [3]string{"c1", "x", "{}"}, [3]string{"c2", "x", "{}"})
	g.clock.Advance(30 * time.Minute)
	g.pause(t, "r2", "sb", "bob", [3]string{"c3", "x", "{}"})

	g.clock.Advance(24*time.Hour - 30*time.Minute) // r1's are exactly 24h old: not yet expired
	if got, ttl, err := g.Expired(ctx); err != nil || len(got) != 0 || ttl != 1440 {
		t.Fatalf("Expired at the TTL = %v, %d, %v; want none and the default 1440", ids(got), ttl, err)
	}
	g.clock.Advance(time.Minute)
	if got, ttl, err := g.Expired(ctx); err != nil || len(got) != 1 || got[0].RunID != "r1" || ttl != 1440 {
		t.Fatalf("Expired past r1's TTL = %v, %d, %v; want one approval of r1", ids(got), ttl, err)
	}
	g.clock.Advance(time.Hour)
	got, _, err := g.Expired(ctx)
	if err != nil || len(got) != 2 || got[0].RunID != "r1" || got[1].RunID != "r2" {
		t.Fatalf("Expired past both = %v, %v; want one per run", ids(got), err)
	}

	if _, err := g.settings.Put(ctx, admin, settings.KeyApprovalTTLMinutes, "0"); err != nil {
		t.Fatal(err)
	}
	if got, ttl, err := g.Expired(ctx); err != nil || got != nil || ttl != 0 {
		t.Fatalf("Expired with approval_ttl_minutes 0 = %v, %d, %v; want nothing ever expiring", ids(got), ttl, err)
	}
}

package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Audit is the contract of ports.AuditStore: appended records come back
// whole (times in UTC milliseconds), newest first, each filter selects
// what it names, the cursor pages without a gap or a repeat, and a prune
// deletes exactly what was made before its cutoff. s must hold no records.
func Audit(t *testing.T, s ports.AuditStore) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 123_456_789, time.UTC)
	alice := domain.Actor{Kind: domain.ActorUser, ID: "u1", Name: "alice", Address: "10.0.0.1"}
	bob := domain.Actor{Kind: domain.ActorUser, ID: "u2", Name: "bob", Address: "10.0.0.2"}
	hook := domain.Actor{Kind: domain.ActorWebhook, ID: "tr1", Name: "deploys"}
	var want []domain.AuditRecord
	for i := range 7 {
		r := domain.AuditRecord{At: at.Add(time.Duration(i) * time.Minute), Actor: alice, Action: "provider.update",
			ObjectKind: "provider", ObjectID: fmt.Sprintf("p%d", i), ObjectName: "OpenAI", Outcome: domain.AuditSuccess,
			Fields: []string{"api_key", "base_url"}}
		switch i {
		case 2:
			r.Actor, r.Action, r.ObjectKind, r.Fields = bob, "agent.create", "agent", nil
		case 4:
			r.Actor, r.Action, r.ObjectKind, r.Outcome, r.Reason, r.Fields = hook, "webhook.deliver", "trigger",
				domain.AuditFailure, "the signature did not match", nil
		case 5:
			r.Actor, r.Action, r.Method, r.ObjectKind, r.Fields = bob, "signin", "password", "user", nil
		}
		if err := s.AppendAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.At = time.UnixMilli(r.At.UnixMilli()).UTC()
		if r.Fields == nil {
			r.Fields = []string{}
		}
		want = append(want, r)
	}
	list := func(q domain.AuditQuery) []domain.AuditRecord {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = domain.AuditPageMax
		}
		got, err := s.ListAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := list(domain.AuditQuery{})
	if len(all) != len(want) {
		t.Fatalf("listed %d records, want %d", len(all), len(want))
	}
	for i, got := range all {
		w := want[len(want)-1-i]
		w.Seq = got.Seq
		if i > 0 && got.Seq >= all[i-1].Seq {
			t.Fatalf("record %d has seq %d after %d: want newest first", i, got.Seq, all[i-1].Seq)
		}
		if got.At.Location() != time.UTC || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", w) {
			t.Fatalf("record %d = %+v\nwant %+v", i, got, w)
		}
	}
	ids := func(rs []domain.AuditRecord) (out []string) {
		for _, r := range rs {
			out = append(out, r.ObjectID)
		}
		return out
	}
	for _, c := range []struct {
		name string
		q    domain.AuditQuery
		want []string
	}{
		{"by actor", domain.AuditQuery{ActorID: "u2"}, []string{"p5", "p2"}},
		{"by actor kind", domain.AuditQuery{ActorKind: domain.ActorWebhook}, []string{"p4"}},
		{"by object kind", domain.AuditQuery{ObjectKind: "provider"}, []string{"p6", "p3", "p1", "p0"}},
		{"by object", domain.AuditQuery{ObjectID: "p3"}, []string{"p3"}},
		{"by action", domain.AuditQuery{Action: "signin"}, []string{"p5"}},
		{"since, inclusive", domain.AuditQuery{Since: at.Add(5 * time.Minute)}, []string{"p6", "p5"}},
		{"until, exclusive", domain.AuditQuery{Until: at.Add(2 * time.Minute)}, []string{"p1", "p0"}},
		{"both", domain.AuditQuery{ActorID: "u1", Since: at.Add(time.Minute), Until: at.Add(6 * time.Minute)}, []string{"p3", "p1"}},
	} {
		if got := ids(list(c.q)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Paging by the cursor meets every record once.
	var paged []string
	q := domain.AuditQuery{Limit: 3}
	for range 5 {
		page := list(q)
		paged = append(paged, ids(page)...)
		if len(page) < q.Limit {
			break
		}
		q.Before = page[len(page)-1].Seq
	}
	if !slices.Equal(paged, ids(all)) {
		t.Fatalf("paged %v, want %v", paged, ids(all))
	}
	if n, err := s.PruneAudit(ctx, at.Add(3*time.Minute)); err != nil || n != 3 {
		t.Fatalf("prune = %d, %v; want the 3 records before the cutoff", n, err)
	}
	if got := ids(list(domain.AuditQuery{})); !slices.Equal(got, []string{"p6", "p5", "p4", "p3"}) {
		t.Fatalf("after the prune: %v", got)
	}
}

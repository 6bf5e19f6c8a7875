package sessions_test

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// A fold moves the totals by what it takes away and what it adds: they
// end as a recount from scratch would make them, with no rescan.
func TestAFoldKeepsTheTotalsARecountWouldMake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "long")
	f.appendAll(t, s.ID, userMsg("the first question, at some length", "r1"),
		reply("the first answer, at some length too", "r1", &domain.Usage{InputTokens: 20, OutputTokens: 10, TotalTokens: 30}),
		userMsg("second", "r2"), reply("two", "r2", &domain.Usage{InputTokens: 40, OutputTokens: 2, TotalTokens: 42}))
	plan, err := f.svc.PlanFold(ctx, s.ID, 2)
	if err != nil || len(plan.Entries) != 2 {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
	cp := domain.Entry{Kind: domain.KindCompaction, Checkpoint: &domain.Checkpoint{Summary: "they asked twice"}}
	if _, err := f.svc.ApplyFold(ctx, s.ID, plan, cp); err != nil {
		t.Fatal(err)
	}
	var got, want domain.ContextTotals
	err = f.store.ReadSession(ctx, s.ID, func(r ports.SessionReader) error {
		sess, err := r.Session(ctx)
		if err != nil {
			return err
		}
		metas, err := r.EntryMetas(ctx, 0)
		got, want = sess.Totals, domain.ComputeTotals(metas, domain.ActivePath(domain.IndexMetas(metas), sess.TipID))
		return err
	})
	if err != nil || got != want {
		t.Fatalf("totals after the fold = %+v, a recount = %+v (%v)", got, want, err)
	}
	if after := plan.AfterTokens(cp); after != got.ConversationTokens() {
		t.Fatalf("the announced estimate %d, the stored one %d", after, got.ConversationTokens())
	}
	// The same plan again loses: its entries are folded already.
	if _, err := f.svc.ApplyFold(ctx, s.ID, plan, cp); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a second fold of the same entries: %v", err)
	}
}

package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func usagePrices(t *testing.T, s ports.UsageStore) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 0, 0, 123_456_789, time.UTC)
	stored := func(p domain.Price) domain.Price {
		p.UpdatedAt = time.UnixMilli(p.UpdatedAt.UnixMilli()).UTC()
		return p
	}
	gpt := domain.Price{ID: "price-1", ProviderType: "openai", Model: "gpt-5", InputMicros: 1_250_000, CachedInputMicros: 125_000,
		OutputMicros: 10_000_000, Source: "https://openai.com/api/pricing", AsOf: "2026-11-30", UpdatedAt: at}
	got, err := s.PutPrice(ctx, gpt)
	if err != nil {
		t.Fatal(err)
	}
	if got != stored(gpt) {
		t.Fatalf("put %+v; want %+v", got, stored(gpt))
	}
	found, err := s.FindPrice(ctx, "openai", "gpt-5")
	if err != nil || found != stored(gpt) || found.UpdatedAt.Location() != time.UTC {
		t.Fatalf("found %+v, %v; want %+v", found, err, stored(gpt))
	}
	// Put again under another id: the row keeps its id, takes the figures.
	again := gpt
	again.ID, again.InputMicros, again.Source, again.UpdatedAt = "price-9", 2_000_000, "an admin", at.Add(time.Hour)
	got, err = s.PutPrice(ctx, again)
	want := stored(again)
	want.ID = "price-1"
	if err != nil || got != want {
		t.Fatalf("replaced: %+v, %v; want %+v", got, err, want)
	}
	if found, _ := s.FindPrice(ctx, "openai", "gpt-5"); found != want {
		t.Fatalf("after the replacement found %+v; want %+v", found, want)
	}
	// A seed adds what has no row and never overwrites a figure.
	seed := []domain.Price{
		{ID: "seed-1", ProviderType: "openai", Model: "gpt-5", InputMicros: 1, OutputMicros: 1, UpdatedAt: at},
		{ID: "seed-2", ProviderType: "anthropic", Model: "claude", InputMicros: 3_000_000, OutputMicros: 15_000_000, AsOf: "2026-11-01", UpdatedAt: at},
		{ID: "seed-3", ProviderType: "openai", Model: "gpt-5-mini", InputMicros: 250_000, OutputMicros: 2_000_000, UpdatedAt: at},
	}
	if n, err := s.SeedPrices(ctx, seed); err != nil || n != 2 {
		t.Fatalf("seeded %d, %v; want 2 new", n, err)
	}
	if n, err := s.SeedPrices(ctx, seed); err != nil || n != 0 {
		t.Fatalf("seeded again %d, %v; want none", n, err)
	}
	list, err := s.ListPrices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint([]domain.Price{stored(seed[1]), want, stored(seed[2])}); fmt.Sprint(list) != w {
		t.Fatalf("the table:\n got %v\nwant %v", list, w)
	}
	if err := s.DeletePrice(ctx, "seed-3"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePrice(ctx, "seed-3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting it again: %v; want not_found", err)
	}
	if _, err := s.FindPrice(ctx, "openai", "gpt-5-mini"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("finding a deleted price: %v; want not_found", err)
	}
	if _, err := s.FindPrice(ctx, "anthropic", "gpt-5"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("finding a model under another type: %v; want not_found", err)
	}
}

func usageBudgets(t *testing.T, s ports.UsageStore) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 0, 0, 999_999, time.UTC)
	budget := func(id string, scope domain.BudgetScope, subject string, period domain.BudgetPeriod, unit domain.BudgetUnit,
		limit int64, created time.Time) domain.Budget {
		return domain.Budget{ID: id, Scope: scope, SubjectID: subject, Period: period, Unit: unit, Limit: limit,
			CreatedAt: created, UpdatedAt: created}
	}
	stored := func(b domain.Budget) domain.Budget {
		b.CreatedAt, b.UpdatedAt = time.UnixMilli(b.CreatedAt.UnixMilli()).UTC(), time.UnixMilli(b.UpdatedAt.UnixMilli()).UTC()
		return b
	}
	// Made newest first, listed oldest first.
	bs := []domain.Budget{
		budget("b3", domain.BudgetPerson, "u1", domain.PeriodMonth, domain.BudgetUSD, 20_000_000, at.Add(2*time.Minute)),
		budget("b2", domain.BudgetDefault, "", domain.PeriodDay, domain.BudgetTokens, 1_000_000, at.Add(time.Minute)),
		budget("b1", domain.BudgetProvider, "p1", domain.PeriodWeek, domain.BudgetUSD, 100_000_000, at),
		budget("b4", domain.BudgetPerson, "u1", domain.PeriodMonth, domain.BudgetTokens, 5_000_000, at.Add(3*time.Minute)),
	}
	for _, b := range bs {
		if err := s.CreateBudget(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ListBudgets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprint([]domain.Budget{stored(bs[2]), stored(bs[1]), stored(bs[0]), stored(bs[3])}); fmt.Sprint(list) != w {
		t.Fatalf("the budgets:\n got %v\nwant %v", list, w)
	}
	// One budget per scope, subject, period and unit.
	dup := budget("b5", domain.BudgetPerson, "u1", domain.PeriodMonth, domain.BudgetUSD, 1, at)
	if err := s.CreateBudget(ctx, dup); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a second month budget in dollars for u1: %v; want conflict", err)
	}
	if _, err := s.GetBudget(ctx, "b5"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the refused budget: %v; want not_found", err)
	}
	// An update changes the limit alone.
	upd := bs[0]
	upd.Limit, upd.UpdatedAt, upd.Unit, upd.CreatedAt = 30_000_000, at.Add(time.Hour), domain.BudgetTokens, at.Add(time.Hour)
	if err := s.UpdateBudget(ctx, upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBudget(ctx, "b3")
	want := stored(bs[0])
	want.Limit, want.UpdatedAt = 30_000_000, stored(upd).UpdatedAt
	if err != nil || got != want {
		t.Fatalf("updated: %+v, %v; want %+v", got, err, want)
	}
	if err := s.UpdateBudget(ctx, budget("absent", domain.BudgetAgent, "a1", domain.PeriodDay, domain.BudgetUSD, 1, at)); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating an absent budget: %v; want not_found", err)
	}
	if err := s.DeleteBudget(ctx, "b2"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBudget(ctx, "b2"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting it again: %v; want not_found", err)
	}
	if _, err := s.GetBudget(ctx, "b2"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("getting a deleted budget: %v; want not_found", err)
	}
	// Its slot is free again.
	if err := s.CreateBudget(ctx, budget("b6", domain.BudgetDefault, "", domain.PeriodDay, domain.BudgetTokens, 2, at)); err != nil {
		t.Fatalf("a default day budget after the first was deleted: %v", err)
	}
}

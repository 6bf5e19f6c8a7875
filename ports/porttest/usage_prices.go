package porttest

import (
	"cmp"
	"context"
	"slices"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The price table and the budgets of the in-memory UsageStore.

// ListPrices implements ports.UsageStore.
func (s *UsageStore) ListPrices(ctx context.Context) ([]domain.Price, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]domain.Price{}, s.prices...)
	slices.SortFunc(out, func(a, b domain.Price) int {
		return cmp.Or(cmp.Compare(a.ProviderType, b.ProviderType), cmp.Compare(a.Model, b.Model))
	})
	return out, nil
}

// FindPrice implements ports.UsageStore.
func (s *UsageStore) FindPrice(ctx context.Context, providerType, model string) (domain.Price, error) {
	if err := ctx.Err(); err != nil {
		return domain.Price{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.priceOf(providerType, model); i >= 0 {
		return s.prices[i], nil
	}
	return domain.Price{}, errs.E(errs.NotFound, "price not found")
}

func (s *UsageStore) priceOf(providerType, model string) int {
	return slices.IndexFunc(s.prices, func(p domain.Price) bool { return p.ProviderType == providerType && p.Model == model })
}

// PutPrice implements ports.UsageStore.
func (s *UsageStore) PutPrice(ctx context.Context, p domain.Price) (domain.Price, error) {
	if err := ctx.Err(); err != nil {
		return domain.Price{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.UpdatedAt = storedTime(p.UpdatedAt)
	if i := s.priceOf(p.ProviderType, p.Model); i >= 0 {
		p.ID = s.prices[i].ID
		s.prices[i] = p
		return p, nil
	}
	if slices.ContainsFunc(s.prices, func(x domain.Price) bool { return x.ID == p.ID }) {
		return domain.Price{}, errs.E(errs.Conflict, "price %s already exists", p.ID)
	}
	s.prices = append(s.prices, p)
	return p, nil
}

// DeletePrice implements ports.UsageStore.
func (s *UsageStore) DeletePrice(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.prices, func(p domain.Price) bool { return p.ID == id })
	if i < 0 {
		return errs.E(errs.NotFound, "price not found")
	}
	s.prices = slices.Delete(s.prices, i, i+1)
	return nil
}

// SeedPrices implements ports.UsageStore.
func (s *UsageStore) SeedPrices(ctx context.Context, prices []domain.Price) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added := 0
	for _, p := range prices {
		if s.priceOf(p.ProviderType, p.Model) >= 0 {
			continue
		}
		if slices.ContainsFunc(s.prices, func(x domain.Price) bool { return x.ID == p.ID }) {
			return 0, errs.E(errs.Conflict, "price %s already exists", p.ID)
		}
		p.UpdatedAt = storedTime(p.UpdatedAt)
		s.prices = append(s.prices, p)
		added++
	}
	return added, nil
}

// ListBudgets implements ports.UsageStore.
func (s *UsageStore) ListBudgets(ctx context.Context) ([]domain.Budget, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]domain.Budget{}, s.budgets...)
	slices.SortStableFunc(out, func(a, b domain.Budget) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// GetBudget implements ports.UsageStore.
func (s *UsageStore) GetBudget(ctx context.Context, id string) (domain.Budget, error) {
	if err := ctx.Err(); err != nil {
		return domain.Budget{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.budgetAt(id); i >= 0 {
		return s.budgets[i], nil
	}
	return domain.Budget{}, errs.E(errs.NotFound, "budget not found")
}

func (s *UsageStore) budgetAt(id string) int {
	return slices.IndexFunc(s.budgets, func(b domain.Budget) bool { return b.ID == id })
}

// CreateBudget implements ports.UsageStore.
func (s *UsageStore) CreateBudget(ctx context.Context, b domain.Budget) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.budgets {
		if x.ID == b.ID || (x.Scope == b.Scope && x.SubjectID == b.SubjectID && x.Period == b.Period && x.Unit == b.Unit) {
			return errs.E(errs.Conflict, "a budget counting %s per %s already exists for this %s: change its limit instead",
				b.Unit, b.Period, b.Scope)
		}
	}
	b.CreatedAt, b.UpdatedAt = storedTime(b.CreatedAt), storedTime(b.UpdatedAt)
	s.budgets = append(s.budgets, b)
	return nil
}

// UpdateBudget implements ports.UsageStore.
func (s *UsageStore) UpdateBudget(ctx context.Context, b domain.Budget) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.budgetAt(b.ID)
	if i < 0 {
		return errs.E(errs.NotFound, "budget not found")
	}
	s.budgets[i].Limit, s.budgets[i].UpdatedAt = b.Limit, storedTime(b.UpdatedAt)
	return nil
}

// DeleteBudget implements ports.UsageStore.
func (s *UsageStore) DeleteBudget(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.budgetAt(id)
	if i < 0 {
		return errs.E(errs.NotFound, "budget not found")
	}
	s.budgets = slices.Delete(s.budgets, i, i+1)
	return nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const budgetColumns = `id, scope, subject_id, period, unit, limit_value, created_at, updated_at`

func scanBudget(r rowScanner) (domain.Budget, error) {
	var b domain.Budget
	var scope, period, unit string
	var created, updated int64
	err := r.Scan(&b.ID, &scope, &b.SubjectID, &period, &unit, &b.Limit, &created, &updated)
	b.Scope, b.Period, b.Unit = domain.BudgetScope(scope), domain.BudgetPeriod(period), domain.BudgetUnit(unit)
	b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
	return b, err
}

// ListBudgets implements ports.UsageStore.
func (db *DB) ListBudgets(ctx context.Context) ([]domain.Budget, error) {
	return collect(ctx, db.read, scanBudget, `SELECT `+budgetColumns+` FROM budgets ORDER BY created_at, id`)
}

// GetBudget implements ports.UsageStore.
func (db *DB) GetBudget(ctx context.Context, id string) (domain.Budget, error) {
	b, err := scanBudget(db.read.QueryRowContext(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Budget{}, notFound("budget")
	}
	return b, translate(err)
}

// CreateBudget implements ports.UsageStore.
func (db *DB) CreateBudget(ctx context.Context, b domain.Budget) error {
	_, err := db.writer().ExecContext(ctx, `INSERT INTO budgets (`+budgetColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, string(b.Scope), b.SubjectID, string(b.Period), string(b.Unit), b.Limit, ms(b.CreatedAt), ms(b.UpdatedAt))
	if errs.Is(err, errs.Conflict) {
		whose := "this " + string(b.Scope)
		if b.Scope == domain.BudgetDefault {
			whose = "the default"
		}
		return errs.Wrap(errs.Conflict, err, "%s already has a budget counting %s per %s: change its limit instead",
			whose, b.Unit, b.Period)
	}
	return err
}

// UpdateBudget implements ports.UsageStore: the limit alone changes.
func (db *DB) UpdateBudget(ctx context.Context, b domain.Budget) error {
	r, err := db.writer().ExecContext(ctx, `UPDATE budgets SET limit_value = ?, updated_at = ? WHERE id = ?`,
		b.Limit, ms(b.UpdatedAt), b.ID)
	return affected(r, err, "budget")
}

// DeleteBudget implements ports.UsageStore.
func (db *DB) DeleteBudget(ctx context.Context, id string) error {
	r, err := db.writer().ExecContext(ctx, `DELETE FROM budgets WHERE id = ?`, id)
	return affected(r, err, "budget")
}

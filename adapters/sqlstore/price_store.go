package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
)

const priceColumns = `id, provider_type, model, input_micros, cached_input_micros, output_micros, source, as_of, updated_at`

func scanPrice(r rowScanner) (domain.Price, error) {
	var p domain.Price
	var updated int64
	err := r.Scan(&p.ID, &p.ProviderType, &p.Model, &p.InputMicros, &p.CachedInputMicros, &p.OutputMicros, &p.Source,
		&p.AsOf, &updated)
	p.UpdatedAt = fromMS(updated)
	return p, err
}

// ListPrices implements ports.UsageStore.
func (db *DB) ListPrices(ctx context.Context) ([]domain.Price, error) {
	return collect(ctx, db.read, scanPrice, `SELECT `+priceColumns+` FROM usage_prices ORDER BY provider_type, model`)
}

// FindPrice implements ports.UsageStore.
func (db *DB) FindPrice(ctx context.Context, providerType, model string) (domain.Price, error) {
	p, err := scanPrice(db.read.QueryRowContext(ctx, `SELECT `+priceColumns+` FROM usage_prices
		WHERE provider_type = ? AND model = ?`, providerType, model))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Price{}, notFound("price")
	}
	return p, translate(err)
}

// PutPrice implements ports.UsageStore. The row of a model that has one
// keeps its id, so what links to it still does.
func (db *DB) PutPrice(ctx context.Context, p domain.Price) (domain.Price, error) {
	var id string
	err := db.tx(ctx, func(t txQ) error {
		return t.QueryRowContext(ctx, `INSERT INTO usage_prices (`+priceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (provider_type, model) DO UPDATE SET input_micros = excluded.input_micros,
			cached_input_micros = excluded.cached_input_micros, output_micros = excluded.output_micros,
			source = excluded.source, as_of = excluded.as_of, updated_at = excluded.updated_at
			RETURNING id`, p.ID, p.ProviderType, p.Model, p.InputMicros, p.CachedInputMicros, p.OutputMicros, p.Source,
			p.AsOf, ms(p.UpdatedAt)).Scan(&id)
	})
	if err != nil {
		return domain.Price{}, translate(err)
	}
	p.ID, p.UpdatedAt = id, fromMS(ms(p.UpdatedAt))
	return p, nil
}

// DeletePrice implements ports.UsageStore.
func (db *DB) DeletePrice(ctx context.Context, id string) error {
	r, err := db.writer().ExecContext(ctx, `DELETE FROM usage_prices WHERE id = ?`, id)
	return affected(r, err, "price")
}

// SeedPrices implements ports.UsageStore: one transaction, and a model
// with a row keeps it.
func (db *DB) SeedPrices(ctx context.Context, prices []domain.Price) (int, error) {
	added := 0
	err := db.tx(ctx, func(t txQ) error {
		added = 0 // counted again should the transaction run again
		for _, p := range prices {
			r, err := t.ExecContext(ctx, `INSERT INTO usage_prices (`+priceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (provider_type, model) DO NOTHING`, p.ID, p.ProviderType, p.Model, p.InputMicros,
				p.CachedInputMicros, p.OutputMicros, p.Source, p.AsOf, ms(p.UpdatedAt))
			if err != nil {
				return translate(err)
			}
			n, _ := r.RowsAffected()
			added += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

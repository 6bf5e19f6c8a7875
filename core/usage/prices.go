package usage

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

//go:embed prices.json
var seedFile []byte

// seedPrice is a row of prices.json: dollars per million tokens.
type seedPrice struct {
	ProviderType string  `json:"provider_type"`
	Model        string  `json:"model"`
	Input        float64 `json:"input"`
	CachedInput  float64 `json:"cached_input"`
	Output       float64 `json:"output"`
	Source       string  `json:"source"`
	AsOf         string  `json:"as_of"`
}

// Seed returns the seed file's prices and its version.
func Seed() ([]domain.Price, int, error) {
	var f struct {
		Version int         `json:"version"`
		Prices  []seedPrice `json:"prices"`
	}
	if err := json.Unmarshal(seedFile, &f); err != nil {
		return nil, 0, err
	}
	out := make([]domain.Price, 0, len(f.Prices))
	for _, p := range f.Prices {
		out = append(out, domain.Price{ProviderType: p.ProviderType, Model: p.Model, InputMicros: Micros(p.Input),
			CachedInputMicros: Micros(p.CachedInput), OutputMicros: Micros(p.Output), Source: p.Source, AsOf: p.AsOf})
	}
	return out, f.Version, nil
}

// Micros turns dollars into micro-dollars, rounded to the nearest.
func Micros(dollars float64) int64 { return int64(math.Round(dollars * 1e6)) }

// Dollars turns micro-dollars into dollars.
func Dollars(micros int64) float64 { return float64(micros) / 1e6 }

// SeedPrices adds the seed file's prices the table lacks, once per seed
// version: a price an admin deleted stays deleted until a newer seed.
func (s *Service) SeedPrices(ctx context.Context) error {
	prices, version, err := Seed()
	if err != nil {
		return err
	}
	key := fmt.Sprintf("usage_prices_seed_v%d", version)
	if _, done, err := s.d.Meta.GetMeta(ctx, key); err != nil || done {
		return err
	}
	now := s.d.Clock.Now()
	for i := range prices {
		prices[i].ID, prices[i].UpdatedAt = s.d.IDs.NewID(), now
	}
	n, err := s.d.Store.SeedPrices(ctx, prices)
	if err != nil {
		return err
	}
	if n > 0 {
		s.d.Log.Info("added the list prices of well-known models", "prices", n, "seed_version", version)
	}
	_, err = s.d.Meta.InitMeta(ctx, key, now.UTC().Format(time.RFC3339))
	return err
}

// ListPrices returns the price table (admins).
func (s *Service) ListPrices(ctx context.Context, p domain.Principal) ([]domain.Price, error) {
	if err := p.RequireAdmin(); err != nil {
		return nil, err
	}
	return s.d.Store.ListPrices(ctx)
}

// maxPriceMicros bounds a price: $100,000 per million tokens is past any
// model's, and keeps a cost's arithmetic far from overflowing.
const maxPriceMicros = 100_000 * 1_000_000

var asOfDay = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// PutPrice sets the price of a model (admins): a new row, or the one of
// its provider type and model replaced. Calls recorded before keep their
// cost. Returns validation naming the field.
func (s *Service) PutPrice(ctx context.Context, p domain.Principal, in domain.Price) (domain.Price, error) {
	if err := p.RequireAdmin(); err != nil {
		return domain.Price{}, err
	}
	in.ProviderType, in.Model, in.Source, in.AsOf = strings.TrimSpace(in.ProviderType), strings.TrimSpace(in.Model),
		strings.TrimSpace(in.Source), strings.TrimSpace(in.AsOf)
	var f errs.FieldErrors
	if in.ProviderType == "" || len(in.ProviderType) > 64 {
		f.Add("provider_type", "is required: the provider type (openai, anthropic, or a program's own), at most 64 characters")
	}
	if in.Model == "" || len(in.Model) > 200 {
		f.Add("model", "is required: the model's name as calls name it, at most 200 characters")
	}
	for name, v := range map[string]int64{"input_per_mtok": in.InputMicros, "cached_input_per_mtok": in.CachedInputMicros, "output_per_mtok": in.OutputMicros} {
		if v < 0 || v > maxPriceMicros {
			f.Add(name, "must be from 0 to 100000 dollars per million tokens")
		}
	}
	if len(in.Source) > 500 {
		f.Add("source", "must be at most 500 characters")
	}
	if in.AsOf != "" {
		if _, err := time.Parse(time.DateOnly, in.AsOf); err != nil || !asOfDay.MatchString(in.AsOf) {
			f.Add("as_of", "must be a day like 2026-12-01")
		}
	}
	if err := f.Err(); err != nil {
		return domain.Price{}, err
	}
	in.ID, in.UpdatedAt = s.d.IDs.NewID(), s.d.Clock.Now()
	ctx = audit.Change(ctx, in.UpdatedAt, "price.put", audit.Object{Kind: "price", ID: in.ProviderType + "/" + in.Model, Name: in.Model},
		"input_per_mtok", "cached_input_per_mtok", "output_per_mtok", "source", "as_of")
	return s.d.Store.PutPrice(ctx, in)
}

// DeletePrice removes a price (admins): the model's calls count tokens
// and say "no price" from now on.
func (s *Service) DeletePrice(ctx context.Context, p domain.Principal, id string) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	ctx = audit.Change(ctx, s.d.Clock.Now(), "price.delete", audit.Object{Kind: "price", ID: id})
	return s.d.Store.DeletePrice(ctx, id)
}

// dated matches a model name's version suffix: a date (-20250929,
// -2024-08-06) or -latest, which the price of the family covers.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// priceOf finds the price of a call: the model asked for, then the one
// that answered, each as named and then without a version suffix.
func (s *Service) priceOf(ctx context.Context, providerType string, models ...string) (domain.Price, bool, error) {
	var tried []string
	for _, m := range models {
		for _, name := range []string{m, dated.ReplaceAllString(m, "")} {
			if name == "" || slices.Contains(tried, name) {
				continue
			}
			tried = append(tried, name)
			p, err := s.d.Store.FindPrice(ctx, providerType, name)
			if err == nil {
				return p, true, nil
			}
			if !errs.Is(err, errs.NotFound) {
				return domain.Price{}, false, err
			}
		}
	}
	return domain.Price{}, false, nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const providerColumns = `id, owner_id, scope, name, type, auth_mode, api, base_url, api_key, chatgpt_token, created_at, updated_at`

func scanProvider(r rowScanner) (domain.Provider, error) {
	var p domain.Provider
	var scope string
	var created, updated int64
	err := r.Scan(&p.ID, &p.OwnerID, &scope, &p.Name, &p.Type, &p.AuthMode, &p.API, &p.BaseURL, &p.SealedAPIKey, &p.SealedChatGPTToken, &created, &updated)
	p.Scope = domain.Scope(scope)
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	return p, err
}

func nameTaken(err error, what, name string) error {
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "a %s named %q already exists in that scope", what, name)
	}
	return err
}

// FindProvider implements ports.ProviderReader.
func (c configQ) FindProvider(ctx context.Context, id string) (domain.Provider, error) {
	p, err := scanProvider(c.q.QueryRowContext(ctx, `SELECT `+providerColumns+` FROM providers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, notFound("provider")
	}
	return p, translate(err)
}

// ListProviders implements ports.ProviderReader.
func (c configQ) ListProviders(ctx context.Context) ([]domain.Provider, error) {
	return collect(ctx, c.q, scanProvider, `SELECT `+providerColumns+` FROM providers ORDER BY id DESC`)
}

// InsertProvider implements ports.ProviderWriter.
func (c configQ) InsertProvider(ctx context.Context, p domain.Provider) error {
	_, err := c.q.ExecContext(ctx, `INSERT INTO providers (`+providerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.OwnerID, string(p.Scope), p.Name, p.Type, p.AuthMode, p.API, p.BaseURL, p.SealedAPIKey, "", ms(p.CreatedAt), ms(p.UpdatedAt))
	return nameTaken(translate(err), "provider", p.Name)
}

// UpdateProvider implements ports.ProviderWriter. The owner never changes.
// The ChatGPT sign-in is written only by SwapChatGPTToken, but a provider
// that stops signing in with ChatGPT loses it in the same statement.
func (c configQ) UpdateProvider(ctx context.Context, p domain.Provider) error {
	r, err := c.q.ExecContext(ctx, `UPDATE providers SET scope = ?, name = ?, type = ?, auth_mode = ?, api = ?, base_url = ?,
		api_key = ?, updated_at = ?, chatgpt_token = CASE WHEN ? = 1 THEN chatgpt_token ELSE '' END WHERE id = ?`,
		string(p.Scope), p.Name, p.Type, p.AuthMode, p.API, p.BaseURL, p.SealedAPIKey, ms(p.UpdatedAt), p.AuthMode == domain.AuthChatGPTLogin, p.ID)
	return nameTaken(affected(r, err, "provider"), "provider", p.Name)
}

// DeleteProvider implements ports.ProviderWriter.
func (c configQ) DeleteProvider(ctx context.Context, id string) error {
	r, err := c.q.ExecContext(ctx, `DELETE FROM providers WHERE id = ?`, id)
	return affected(r, err, "provider")
}

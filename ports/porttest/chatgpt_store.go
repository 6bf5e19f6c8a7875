package porttest

import (
	"context"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ChatGPTStore is an in-memory ports.ChatGPTStore beside a ConfigStore:
// it keeps the waiting sign-ins itself, and a provider's sealed sign-in on
// the ConfigStore's provider row, swapped in a transaction of its own. A
// sign-in of a provider that is gone is gone too, as the real store's
// cascade has it. Set Config; the rest of the zero value is ready.
type ChatGPTStore struct {
	Config *ConfigStore

	mu     sync.Mutex
	logins map[string]domain.ChatGPTLogin // by state
}

var _ ports.ChatGPTStore = (*ChatGPTStore)(nil)

// InsertChatGPTLogin stores a waiting sign-in and drops the expired ones;
// conflict for a state already waiting.
func (s *ChatGPTStore) InsertChatGPTLogin(ctx context.Context, l domain.ChatGPTLogin, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := s.Config.FindProvider(ctx, l.ProviderID); err != nil {
		return errs.E(errs.Conflict, "the sign-in's provider %s does not exist", l.ProviderID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for state, w := range s.logins {
		if !w.ExpiresAt.After(storedTime(now)) {
			delete(s.logins, state)
		}
	}
	if _, taken := s.logins[l.State]; taken {
		return errs.E(errs.Conflict, "a sign-in with that state is waiting already")
	}
	if s.logins == nil {
		s.logins = map[string]domain.ChatGPTLogin{}
	}
	l.ExpiresAt = storedTime(l.ExpiresAt)
	s.logins[l.State] = l
	return nil
}

// TakeChatGPTLogin removes and returns the sign-in userID started for
// providerID under state; not_found when none is waiting (expired at now,
// used, never issued, or its provider gone), forbidden when the waiting one
// is another person's or provider's, which stays.
func (s *ChatGPTStore) TakeChatGPTLogin(ctx context.Context, state, providerID, userID string, now time.Time) (domain.ChatGPTLogin, error) {
	if err := ctx.Err(); err != nil {
		return domain.ChatGPTLogin{}, err
	}
	_, perr := s.Config.FindProvider(ctx, providerID)
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logins[state]
	if !ok || !l.ExpiresAt.After(storedTime(now)) {
		return domain.ChatGPTLogin{}, errs.E(errs.NotFound, "sign-in not found")
	}
	if l.ProviderID != providerID || l.UserID != userID {
		return domain.ChatGPTLogin{}, errs.E(errs.Forbidden, "the sign-in was started by another person or for another provider")
	}
	if perr != nil {
		delete(s.logins, state)
		return domain.ChatGPTLogin{}, errs.E(errs.NotFound, "sign-in not found")
	}
	delete(s.logins, state)
	return l, nil
}

// SwapChatGPTToken sets the provider's sealed sign-in to next when it is
// still old and the provider signs in with ChatGPT (false otherwise);
// not_found when the provider is gone.
func (s *ChatGPTStore) SwapChatGPTToken(ctx context.Context, providerID, old, next string) (bool, error) {
	swapped := false
	err := s.Config.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		rows := tx.(configTx).rows
		p, ok := rows.providers[providerID]
		if !ok {
			return errs.E(errs.NotFound, "provider not found")
		}
		if p.AuthMode != domain.AuthChatGPTLogin || p.SealedChatGPTToken != old {
			return nil
		}
		p.SealedChatGPTToken = next
		rows.providers[providerID] = p
		swapped = true
		return nil
	})
	return swapped, err
}

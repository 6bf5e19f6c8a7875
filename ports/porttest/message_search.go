package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

var _ ports.MessageSearch = (*SessionStore)(nil)

// SearchMessages implements ports.MessageSearch by reading every entry of
// the owner's visible sessions: the words and the match are domain's, as
// the SQL store's index holds them.
func (s *SessionStore) SearchMessages(_ context.Context, q ports.MessageQuery) ([]ports.MessageHit, error) {
	if len(q.Terms) == 0 {
		return []ports.MessageHit{}, nil
	}
	s.mu.Lock()
	var states []*sessionState
	for _, st := range s.sessions {
		if st.row.OwnerID == q.OwnerID && !st.row.Hidden {
			states = append(states, st)
		}
	}
	s.mu.Unlock()
	after := storedTime(q.After.CreatedAt)
	hits := []ports.MessageHit{}
	for _, st := range states {
		for _, stored := range st.entries {
			var e domain.Entry
			if json.Unmarshal(stored.body, &e) != nil {
				continue
			}
			role, text, ok := domain.ReadableText(e)
			if !ok || !domain.MatchesTerms(domain.SearchWords(text), q.Terms) {
				continue
			}
			at := storedTime(stored.meta.CreatedAt)
			if !q.After.IsZero() && (at.After(after) || (at.Equal(after) && stored.meta.RowID >= q.After.RowID)) {
				continue
			}
			hits = append(hits, ports.MessageHit{SessionID: st.row.ID, SessionName: st.row.Name, EntryID: stored.meta.ID,
				RowID: stored.meta.RowID, Role: role, CreatedAt: at, Text: text})
		}
	}
	slices.SortFunc(hits, func(a, b ports.MessageHit) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.RowID, a.RowID)
	})
	return hits[:min(len(hits), max(q.Limit, 0))], nil
}

package sessions

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Search page sizes: the default and the most one page holds.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 50
)

// SearchQuery is one page of a message search as a caller asks for it.
type SearchQuery struct {
	// Q is what the person typed: its words are the terms, whatever
	// else it holds only separates them (domain.SearchTerms).
	Q string
	// Limit is the page size: 0 is DefaultSearchLimit.
	Limit int
	// Cursor is the previous page's NextCursor; "" for the first.
	Cursor string
}

// SearchHit is one message that matched, with a snippet around the match.
type SearchHit struct {
	ports.MessageHit
	Snippet []domain.SnippetPart
}

// SearchPage is a page of hits, newest first; NextCursor is "" on the
// last page.
type SearchPage struct {
	Hits       []SearchHit
	NextCursor string
}

// SearchMessages finds the caller's messages (their own visible sessions,
// as List shows them — an admin's too: a session's content is its owner's
// alone) holding every word of the query, newest first. Returns
// validation for an empty or over-long query, a bad limit or a cursor
// this server did not hand out.
func (s *Journal) SearchMessages(ctx context.Context, p domain.Principal, q SearchQuery) (SearchPage, error) {
	terms, err := domain.SearchTerms(q.Q)
	if err != nil {
		return SearchPage{}, err
	}
	if q.Limit < 0 || q.Limit > MaxSearchLimit {
		return SearchPage{}, errs.Field("limit", "must be a whole number from 1 to %d", MaxSearchLimit)
	}
	if q.Limit == 0 {
		q.Limit = DefaultSearchLimit
	}
	after, err := parseSearchCursor(q.Cursor)
	if err != nil {
		return SearchPage{}, err
	}
	if s.search == nil {
		return SearchPage{}, errs.E(errs.Unavailable, "message search is not available on this server")
	}
	// One more than the page tells whether another page follows.
	found, err := s.search.SearchMessages(ctx, ports.MessageQuery{OwnerID: p.User.ID, Terms: terms, Limit: q.Limit + 1, After: after})
	if err != nil {
		return SearchPage{}, err
	}
	page := SearchPage{Hits: make([]SearchHit, 0, min(len(found), q.Limit))}
	for i, h := range found {
		if i == q.Limit {
			last := found[i-1]
			page.NextCursor = strconv.FormatInt(last.CreatedAt.UnixMilli(), 10) + "." + last.RowID
			break
		}
		page.Hits = append(page.Hits, SearchHit{MessageHit: h, Snippet: domain.Snippet(h.Text, terms)})
	}
	return page, nil
}

// parseSearchCursor reads a NextCursor: the last hit's time (Unix
// milliseconds) and row id. Returns validation (field cursor).
func parseSearchCursor(c string) (ports.MessageCursor, error) {
	if c == "" {
		return ports.MessageCursor{}, nil
	}
	at, row, ok := strings.Cut(c, ".")
	ms, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || row == "" {
		return ports.MessageCursor{}, errs.Field("cursor", "is not a cursor a search returned")
	}
	return ports.MessageCursor{CreatedAt: time.UnixMilli(ms).UTC(), RowID: row}, nil
}

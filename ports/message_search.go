package ports

import (
	"context"
	"time"
)

// MessageSearch finds words in what people read of their conversations:
// user messages and assistant answers (domain.ReadableText), split into
// words by domain.SearchWords. It is a port of its own, not a session
// store method, because it is a read across every session of an owner
// with an index of its own — a store may serve it from another engine —
// and the session store's transactions never need it.
type MessageSearch interface {
	// SearchMessages returns the owner's messages holding every term (each
	// the start of a word), in visible sessions only (hidden task sessions
	// are not listed, as ListSessions does not), newest first (created_at,
	// then row id, descending), at most q.Limit of them, after q.After.
	SearchMessages(ctx context.Context, q MessageQuery) ([]MessageHit, error)
}

// MessageQuery is one page of a message search.
type MessageQuery struct {
	OwnerID string
	// Terms are lower-cased words (domain.SearchTerms); a message matches
	// when each is the start of one of its words.
	Terms []string
	Limit int
	// After is the last hit of the previous page; zero for the first.
	After MessageCursor
}

// MessageCursor is where a page of hits ends: hits come newest first, so
// the next page holds the hits older than (CreatedAt, RowID).
type MessageCursor struct {
	CreatedAt time.Time
	RowID     string
}

// IsZero reports whether the cursor is the start (no previous page).
func (c MessageCursor) IsZero() bool { return c.RowID == "" }

// MessageHit is one matching message: where it is and its whole text
// (the caller cuts the snippet).
type MessageHit struct {
	SessionID   string
	SessionName string
	EntryID     string
	RowID       string
	// Role is "user" or "assistant".
	Role      string
	CreatedAt time.Time
	Text      string
}

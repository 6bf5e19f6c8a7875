package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// Session is one conversation: an append-only tree of entries owned by one
// user. Its content is readable by its owner alone — admins may list and
// delete sessions, never open them.
type Session struct {
	ID              string
	OwnerID         string
	Name            string
	Pinned          bool
	AgentConfigID   string
	ProjectID       string // bound by the first project-carrying run; never changed
	Planning        bool
	Hidden          bool   // a background task's session, shown only through its task
	ParentSessionID string // for hidden sessions
	// TipID is the entry the next append continues from; LastSeq the
	// highest seq ever used. Both move in the transaction of every append.
	TipID     string
	LastSeq   int64
	Totals    ContextTotals
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsTaskSession reports whether the session is a background task's own:
// its task runs it, and a run on it is a background run.
func (s Session) IsTaskSession() bool { return s.Hidden && s.ParentSessionID != "" }

// MaxSessionName bounds a session's name.
const MaxSessionName = 200

// CheckContent refuses anyone but the owner — admins included — as if the
// session did not exist. Returns not_found.
func (s Session) CheckContent(p Principal) error {
	if s.OwnerID != p.User.ID {
		return errs.E(errs.NotFound, "session not found")
	}
	return nil
}

// CheckDelete allows the owner and admins. Returns not_found otherwise.
func (s Session) CheckDelete(p Principal) error {
	if s.OwnerID != p.User.ID && !p.IsAdmin() {
		return errs.E(errs.NotFound, "session not found")
	}
	return nil
}

// ValidateSessionName checks a session name. Returns validation.
func ValidateSessionName(name string) error {
	if utf8.RuneCountInString(name) > MaxSessionName {
		return errs.Field("name", "must be at most %d characters", MaxSessionName)
	}
	if strings.ContainsAny(name, "\r\n") {
		return errs.Field("name", "must be one line")
	}
	return nil
}

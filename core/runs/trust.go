package runs

import (
	"sync"

	"github.com/agents-server/agents-server/core/domain"
)

// TrustStore remembers, per session, which shell commands a person approved
// for the rest of the session: one exact command (scope same) or every
// command (scope all). It lives in memory on purpose — trust survives a
// pause and resume but not a restart — and matches exactly, so approving
// `go test` never green-lights `go test && rm -rf /`.
type TrustStore struct {
	mu       sync.Mutex
	sessions map[string]*sessionTrust
}

type sessionTrust struct {
	all  bool
	same map[string]bool
}

// NewTrustStore returns an empty store.
func NewTrustStore() *TrustStore { return &TrustStore{sessions: map[string]*sessionTrust{}} }

// Grant records a decision's scope for a command; scope once records nothing.
func (t *TrustStore) Grant(sessionID string, scope domain.ApprovalScope, command string) {
	if scope != domain.ScopeSame && scope != domain.ScopeAll {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.sessions[sessionID]
	if st == nil {
		st = &sessionTrust{same: map[string]bool{}}
		t.sessions[sessionID] = st
	}
	if scope == domain.ScopeAll {
		st.all = true
		return
	}
	st.same[command] = true
}

// Trusted reports whether a command runs without asking in a session.
func (t *TrustStore) Trusted(sessionID, command string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.sessions[sessionID]
	return st != nil && (st.all || st.same[command])
}

// Forget drops a session's trust (the session was deleted).
func (t *TrustStore) Forget(sessionID string) {
	t.mu.Lock()
	delete(t.sessions, sessionID)
	t.mu.Unlock()
}

package approvals

import (
	"encoding/json"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// TrustStore remembers, per session, which shell commands a person approved
// for the rest of the session: one exact command (scope same) or every
// command (scope all). It lives in memory on purpose — trust survives a
// pause and resume but not a restart — and matches exactly, so approving
// `go test` never green-lights `go test && rm -rf /`.
//
// A run a trigger started keeps its grants to itself: nobody watched the
// session's earlier decisions being made for it, so it neither uses the
// session's standing trust nor adds to it.
type TrustStore struct {
	mu        sync.Mutex
	sessions  map[string]*sessionTrust // by session id, or "run:"+id for a triggered run
	triggered map[string]bool
}

type sessionTrust struct {
	all  bool
	same map[string]bool
}

// NewTrustStore returns an empty store.
func NewTrustStore() *TrustStore {
	return &TrustStore{sessions: map[string]*sessionTrust{}, triggered: map[string]bool{}}
}

// Triggered marks a run a trigger started: its grants are its own.
func (t *TrustStore) Triggered(runID string) {
	t.mu.Lock()
	t.triggered[runID] = true
	t.mu.Unlock()
}

// IsTriggered reports whether a trigger started the run (or the work that
// led to it).
func (t *TrustStore) IsTriggered(runID string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.triggered[runID]
}

// key is where a run's trust is kept; the caller holds mu.
func (t *TrustStore) key(sessionID, runID string) string {
	if t.triggered[runID] {
		return "run:" + runID
	}
	return sessionID
}

// Grant records a decision's scope for a command made in a run; scope once
// records nothing.
func (t *TrustStore) Grant(sessionID, runID string, scope domain.ApprovalScope, command string) {
	if scope != domain.ScopeSame && scope != domain.ScopeAll {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.key(sessionID, runID)
	st := t.sessions[k]
	if st == nil {
		st = &sessionTrust{same: map[string]bool{}}
		t.sessions[k] = st
	}
	if scope == domain.ScopeAll {
		st.all = true
		return
	}
	st.same[command] = true
}

// Trusted reports whether a command runs without asking in a run of a
// session.
func (t *TrustStore) Trusted(sessionID, runID, command string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.sessions[t.key(sessionID, runID)]
	return st != nil && (st.all || st.same[command])
}

// Forget drops a session's trust (the session was deleted).
func (t *TrustStore) Forget(sessionID string) {
	t.mu.Lock()
	delete(t.sessions, sessionID)
	t.mu.Unlock()
}

// Covers reports whether a call is a shell command the run's session (or
// the triggered run itself) already trusts: it runs without asking.
func (t *TrustStore) Covers(sessionID, runID string, call domain.Item) bool {
	return call.Name == tools.ExecCommand && t.Trusted(sessionID, runID, commandOf(call.Arguments))
}

// GrantApproved records the scope of an approved shell command's
// decision; other tools' decisions extend to nothing.
func (t *TrustStore) GrantApproved(a domain.Approval, scope domain.ApprovalScope) {
	if a.ToolName == tools.ExecCommand {
		t.Grant(a.SessionID, a.RunID, scope, commandOf(a.Arguments))
	}
}

// commandOf is the shell command in exec_command's arguments.
func commandOf(args string) string {
	var a struct {
		Cmd string `json:"cmd"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	return a.Cmd
}

package workbench

import (
	"context"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
)

// The facades name what a program may call; each method is the core
// service's, with its rules and its *errs.Error codes (validation,
// not_found, forbidden, conflict, ...), as the REST API applies them.

// Providers manages model providers: their endpoints, types and sealed
// keys.
type Providers struct{ s *providers.Service }

// List returns the providers p may use.
func (f Providers) List(ctx context.Context, p domain.Principal) ([]domain.Provider, error) {
	return f.s.List(ctx, p)
}

// Get returns one provider p may use (not_found otherwise).
func (f Providers) Get(ctx context.Context, p domain.Principal, id string) (domain.Provider, error) {
	return f.s.Get(ctx, p, id)
}

// Create adds a provider in scope (private to p, or shared by an admin).
func (f Providers) Create(ctx context.Context, p domain.Principal, scope domain.Scope, in providers.Input) (domain.Provider, error) {
	return f.s.Create(actedBy(ctx, p), p, scope, in)
}

// Update changes a provider p owns (an empty key keeps the stored one).
func (f Providers) Update(ctx context.Context, p domain.Principal, id string, in providers.Input) (domain.Provider, error) {
	return f.s.Update(actedBy(ctx, p), p, id, in)
}

// Delete removes a provider p owns.
func (f Providers) Delete(ctx context.Context, p domain.Principal, id string) error {
	return f.s.Delete(actedBy(ctx, p), p, id)
}

// Agents manages agent configurations.
type Agents struct{ s *agents.Service }

// List returns the agents p may use.
func (f Agents) List(ctx context.Context, p domain.Principal) ([]domain.Agent, error) {
	return f.s.List(ctx, p)
}

// Get returns one agent p may use (not_found otherwise).
func (f Agents) Get(ctx context.Context, p domain.Principal, id string) (domain.Agent, error) {
	return f.s.Get(ctx, p, id)
}

// Create adds an agent in scope.
func (f Agents) Create(ctx context.Context, p domain.Principal, scope domain.Scope, spec domain.AgentSpec) (domain.Agent, error) {
	return f.s.Create(actedBy(ctx, p), p, scope, spec)
}

// Update replaces the configuration of an agent p owns.
func (f Agents) Update(ctx context.Context, p domain.Principal, id string, spec domain.AgentSpec) (domain.Agent, error) {
	return f.s.Update(actedBy(ctx, p), p, id, spec)
}

// Delete removes an agent p owns.
func (f Agents) Delete(ctx context.Context, p domain.Principal, id string) error {
	return f.s.Delete(actedBy(ctx, p), p, id)
}

// Tools lists the tools an agent is given, the program's own among them.
func (f Agents) Tools(ctx context.Context, p domain.Principal, id string) ([]tools.Spec, error) {
	return f.s.Tools(ctx, p, id)
}

// Sessions manages conversations and reads their transcripts.
type Sessions struct{ s *sessions.Service }

// Create starts a conversation called name with an agent.
func (f Sessions) Create(ctx context.Context, p domain.Principal, name, agentID string) (domain.Session, error) {
	return f.s.Create(ctx, p, name, agentID)
}

// Get returns one of p's sessions (not_found otherwise).
func (f Sessions) Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error) {
	return f.s.Get(ctx, p, id)
}

// List returns p's sessions (with all, an admin's lists everyone's).
func (f Sessions) List(ctx context.Context, p domain.Principal, all bool) ([]domain.Session, error) {
	return f.s.List(ctx, p, all)
}

// Transcript returns the last limit lines of a conversation as a person
// reads it.
func (f Sessions) Transcript(ctx context.Context, p domain.Principal, id string, limit int) ([]sessions.Line, error) {
	return f.s.Transcript(ctx, p, id, limit)
}

// Runs starts runs, streams their events, cancels them and decides their
// approvals.
type Runs struct{ s *runs.Service }

// Start starts a run in a session (conflict while one is live there).
func (f Runs) Start(ctx context.Context, p domain.Principal, sessionID string, req runs.StartRequest) (domain.Run, error) {
	return f.s.Start(ctx, p, sessionID, req)
}

// Get returns a run of one of p's sessions.
func (f Runs) Get(ctx context.Context, p domain.Principal, runID string) (domain.Run, error) {
	return f.s.Get(ctx, p, runID)
}

// Subscribe follows a run's events after sequence number fromSeq (0: from
// its start); a run no longer live answers from its stored record.
func (f Runs) Subscribe(ctx context.Context, p domain.Principal, runID string, fromSeq int64) (*hub.Subscription, error) {
	return f.s.Subscribe(ctx, p, runID, fromSeq)
}

// Inject queues input into a live run: steer and next_turn reach it at the
// next turn boundary, follow_up starts a new exchange when this one ends.
func (f Runs) Inject(ctx context.Context, p domain.Principal, runID string, queue domain.QueueMode, input string) error {
	return f.s.Inject(ctx, p, runID, queue, input)
}

// Cancel stops a run: abort at once, graceful after the current turn.
func (f Runs) Cancel(ctx context.Context, p domain.Principal, runID string, mode domain.CancelMode) error {
	return f.s.Cancel(ctx, p, runID, mode)
}

// Approvals lists a session's tool calls waiting for a decision.
func (f Runs) Approvals(ctx context.Context, p domain.Principal, sessionID string) ([]domain.Approval, error) {
	return f.s.Approvals(ctx, p, sessionID)
}

// Decide approves or denies a waiting call (reason tells the model why
// not); the paused run resumes once every call is decided.
func (f Runs) Decide(ctx context.Context, p domain.Principal, approvalID string, approve bool, scope domain.ApprovalScope,
	reason string) (domain.Run, error) {
	return f.s.Decide(actedBy(ctx, p), p, approvalID, approve, scope, reason)
}

// Traces reads runs' traces.
type Traces struct{ s *traces.Service }

// List returns a session's spans, oldest first: all, or with a page limit
// the newest before page.BeforeID; summary leaves the payloads out.
func (f Traces) List(ctx context.Context, p domain.Principal, sessionID string, summary bool, page ports.SpanPage) ([]domain.Span, error) {
	return f.s.List(ctx, p, sessionID, summary, page)
}

// Get returns one span of a session.
func (f Traces) Get(ctx context.Context, p domain.Principal, sessionID, spanID string) (domain.Span, error) {
	return f.s.Get(ctx, p, sessionID, spanID)
}

// actedBy is ctx naming p as the actor of what a program does for them,
// for the audit log, unless the program named an actor itself.
func actedBy(ctx context.Context, p domain.Principal) context.Context {
	if ports.ActorOf(ctx).Kind != domain.ActorSystem {
		return ctx
	}
	return ports.WithActor(ctx, domain.UserActor(p.User, ""))
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
)

// SessionView is a session as listed and read.
type SessionView struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Pinned        bool      `json:"pinned"`
	AgentConfigID string    `json:"agent_config_id,omitempty"`
	ProjectID     string    `json:"project_id,omitempty" doc:"Bound by the first project-carrying run; absent while unbound; never changes"`
	Planning      bool      `json:"planning"`
	OwnerID       string    `json:"owner_id"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at" doc:"Latest activity"`
}

func sessionView(s domain.Session) SessionView {
	return SessionView{ID: s.ID, Name: s.Name, Pinned: s.Pinned, AgentConfigID: s.AgentConfigID, ProjectID: s.ProjectID,
		Planning: s.Planning, OwnerID: s.OwnerID, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

// CreateSessionRequest starts a session.
type CreateSessionRequest struct {
	Name          string `json:"name,omitempty"`
	AgentConfigID string `json:"agent_config_id,omitempty" doc:"An agent the caller can see"`
}

// PatchSessionRequest renames and/or pins; absent fields stay.
type PatchSessionRequest struct {
	Name   *string `json:"name,omitempty"`
	Pinned *bool   `json:"pinned,omitempty"`
}

// BranchRequest names the entry the conversation continues from.
type BranchRequest struct {
	EntryID string `json:"entry_id" required:"true" doc:"The entry to continue from; \"root\" continues from before the first message (an edited first message starts a new first branch)"`
}

// ForkSessionRequest bounds a fork; the body may be omitted (fork everything).
type ForkSessionRequest struct {
	MessageID string `json:"message_id,omitempty" doc:"Copy up to and including this entry; omit for everything"`
	Exclusive bool   `json:"exclusive,omitempty" doc:"Leave the boundary entry itself out"`
	Label     string `json:"label,omitempty" doc:"The fork's name"`
}

// SiblingsView places an entry among the attempts at one branch point.
type SiblingsView struct {
	Index int      `json:"index" doc:"This entry's place among heads (0-based)"`
	Count int      `json:"count"`
	Heads []string `json:"heads" doc:"The first entry of each attempt, oldest first"`
	Tips  []string `json:"tips" doc:"The newest entry of each attempt: branch to it to switch"`
}

// EntryView is a session entry as listed, updates folded in.
type EntryView struct {
	ID          string             `json:"id"`
	RowID       string             `json:"row_id" doc:"UUIDv7; page backwards with before_id"`
	ParentID    string             `json:"parent_id,omitempty" doc:"The nearest earlier content entry on this entry's branch"`
	Seq         int64              `json:"seq"`
	Kind        string             `json:"kind" doc:"item, annotation, compaction, … (open set: show unknown kinds generically)"`
	Source      string             `json:"source,omitempty"`
	RunID       string             `json:"run_id,omitempty"`
	Item        json.RawMessage    `json:"item,omitempty" doc:"For kind item: the Responses item"`
	Text        string             `json:"text,omitempty"`
	Display     *domain.Display    `json:"display,omitempty"`
	Usage       *domain.Usage      `json:"usage,omitempty"`
	Diagnostics json.RawMessage    `json:"diagnostics,omitempty"`
	Checkpoint  *domain.Checkpoint `json:"checkpoint,omitempty"`
	Data        json.RawMessage    `json:"data,omitempty"`
	OnPath      bool               `json:"on_path" doc:"false: an abandoned attempt, still stored and switchable-to"`
	Compacted   bool               `json:"compacted"`
	Siblings    *SiblingsView      `json:"siblings,omitempty" doc:"Present where attempts diverge"`
	CreatedAt   time.Time          `json:"created_at"`
}

// entryHead is the part of an EntryView computed on read; the rest is the
// entry's stored JSON, spliced in after it untouched.
type entryHead struct {
	RowID     string        `json:"row_id"`
	Seq       int64         `json:"seq"`
	ParentID  string        `json:"parent_id,omitempty"`
	OnPath    bool          `json:"on_path"`
	Compacted bool          `json:"compacted"`
	Siblings  *SiblingsView `json:"siblings,omitempty"`
}

// encodeEntries writes a page as a JSON array of EntryView objects.
func encodeEntries(list []sessions.Listed) (Encoded[[]EntryView], error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, l := range list {
		if i > 0 {
			buf.WriteByte(',')
		}
		head := entryHead{RowID: l.Meta.RowID, Seq: l.Meta.Seq, ParentID: l.Parent, OnPath: l.OnPath, Compacted: l.Meta.Compacted}
		if l.Siblings != nil {
			head.Siblings = &SiblingsView{Index: l.SiblingIndex, Count: len(l.Siblings.Heads), Heads: l.Siblings.Heads, Tips: l.Siblings.Tips}
		}
		hb, err := json.Marshal(head)
		if err != nil {
			return Encoded[[]EntryView]{}, err
		}
		body := bytes.TrimSpace(l.Body)
		if len(body) < 2 || body[0] != '{' {
			return Encoded[[]EntryView]{}, errs.E(errs.Internal, "entry %s has a malformed body", l.Meta.RowID)
		}
		buf.Write(hb[:len(hb)-1])
		if inner := bytes.TrimSpace(body[1 : len(body)-1]); len(inner) > 0 {
			buf.WriteByte(',')
			buf.Write(inner)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	return Encoded[[]EntryView]{Bytes: buf.Bytes()}, nil
}

// ContextView is the Context panel's payload.
type ContextView struct {
	InputTokens        int64           `json:"input_tokens" doc:"The last model call's input (provider count)"`
	CachedTokens       int64           `json:"cached_tokens"`
	CacheWriteTokens   int64           `json:"cache_write_tokens"`
	ContextWindow      int             `json:"context_window" doc:"The agent's declared window; 0 when unset"`
	ConversationTokens int64           `json:"conversation_tokens" doc:"Estimate (characters / 4) of the active, uncompacted transcript"`
	CompactionTokens   int64           `json:"compaction_tokens" doc:"The number a compaction threshold is compared with"`
	SessionInputTokens int64           `json:"session_input_tokens" doc:"Input tokens of every call, summed (re-sent history counts each time)"`
	Prompt             json.RawMessage `json:"prompt,omitempty" doc:"What the last run's build put before the conversation, in characters; absent before any run"`
	Usage              UsageTotalsView `json:"usage" doc:"Every model call recorded for the conversation (titles and compactions included): tokens and cost"`
}

// RunSummaryView is one run found in a session's entries.
type RunSummaryView struct {
	RunID         string          `json:"run_id"`
	Question      string          `json:"question" doc:"The user message the run answered; for a wake-up, ▶ what woke it: the workflow and who started it (its start note), or the tasks that reported"`
	OnPath        bool            `json:"on_path"`
	Entries       int             `json:"entries"`
	StartedAt     time.Time       `json:"started_at"`
	LastAt        time.Time       `json:"last_at"`
	Status        string          `json:"status,omitempty" enum:"run_status" doc:"How the run stands; absent for a run recorded in another session (a fork's copied history)"`
	ErrorCode     string          `json:"error_code,omitempty" doc:"Why it failed or stopped"`
	AgentConfigID string          `json:"agent_config_id,omitempty"`
	EndedAt       *time.Time      `json:"ended_at,omitempty"`
	Usage         UsageTotalsView `json:"usage" doc:"The run's model calls in this conversation (its title and compactions included): tokens and cost"`
}

func (s *Server) sessionRoutes() []Route {
	p := APIPrefix + "/sessions"
	return []Route{
		op(http.MethodGet, p, "listSessions", "sessions",
			"The caller's sessions, pinned first then by latest activity; admins may list everyone's with all=true",
			http.StatusOK, s.handleListSessions).
			WithQuery(QueryParam{Name: "all", Type: "boolean", Description: "Admins: every user's sessions"}).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		op(http.MethodPost, p, "createSession", "sessions", "Start a session", http.StatusCreated, s.handleCreateSession),
		op(http.MethodGet, p+"/:id", "getSession", "sessions", "One of the caller's sessions", http.StatusOK, s.handleGetSession),
		op(http.MethodPatch, p+"/:id", "patchSession", "sessions", "Rename and/or pin a session", http.StatusOK, s.handlePatchSession),
		op(http.MethodDelete, p+"/:id", "deleteSession", "sessions",
			"Delete a session and everything it holds (its owner or an admin); its live or paused run is stopped first",
			http.StatusNoContent, s.handleDeleteSession),
		op(http.MethodGet, p+"/:id/messages", "listMessages", "sessions",
			"The session's entries, updates folded in: all oldest-first, or the newest limit, paging back with before_id",
			http.StatusOK, s.handleMessages).WithQuery(
			QueryParam{Name: "limit", Type: "integer", Description: "Newest N entries; omit for all",
				Bound: between(1, sessions.MaxPageLimit)},
			QueryParam{Name: "before_id", Type: "string", Description: "Exclusive upper bound: the smallest row_id received"}).
			WithRefusals(http.StatusBadRequest),
		op(http.MethodPost, p+"/:id/compact", "compactSession", "sessions",
			"Fold the conversation's older history into a summary now (the threshold is skipped; the kept window and the pairing guards are not): compacted false when there was nothing to fold",
			http.StatusOK, s.handleCompact).WithRefusals(http.StatusBadRequest, http.StatusConflict),
		op(http.MethodPost, p+"/:id/branch", "branchSession", "sessions",
			"Continue the conversation from an entry: appends a branch marker, deletes nothing; 409 while a run is active",
			http.StatusOK, s.handleBranch).WithRefusals(http.StatusConflict),
		op(http.MethodPost, p+"/:id/fork", "forkSession", "sessions",
			"Copy the session (up to an entry) into a new one, ids rewritten", http.StatusCreated, s.handleFork).WithOptionalBody(),
		op(http.MethodGet, p+"/:id/context", "getSessionContext", "sessions",
			"What the active branch occupies of the model's context window", http.StatusOK, s.handleContext),
		op(http.MethodGet, p+"/:id/runs", "listSessionRuns", "sessions",
			"Every run that wrote the session, with the question it answered", http.StatusOK, s.handleSessionRuns),
	}
}

func (s *Server) handleListSessions(c echo.Context, _ *NoBody) ([]SessionView, error) {
	all, err := boolQuery(c, "all")
	if err != nil {
		return nil, err
	}
	list, err := s.deps.Sessions.List(c.Request().Context(), caller(c), all)
	return mapAll(list, sessionView), err
}

func (s *Server) handleCreateSession(c echo.Context, req *CreateSessionRequest) (SessionView, error) {
	sess, err := s.deps.Sessions.Create(c.Request().Context(), caller(c), req.Name, req.AgentConfigID)
	return sessionView(sess), err
}

func (s *Server) handleGetSession(c echo.Context, _ *NoBody) (SessionView, error) {
	sess, err := s.deps.Sessions.Get(c.Request().Context(), caller(c), c.Param("id"))
	return sessionView(sess), err
}

func (s *Server) handlePatchSession(c echo.Context, req *PatchSessionRequest) (SessionView, error) {
	sess, err := s.deps.Sessions.Patch(c.Request().Context(), caller(c), c.Param("id"), req.Name, req.Pinned)
	return sessionView(sess), err
}

func (s *Server) handleDeleteSession(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Sessions.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleMessages(c echo.Context, _ *NoBody) (Encoded[[]EntryView], error) {
	page := sessions.Page{BeforeRowID: c.QueryParam("before_id")}
	var err error
	if page.Limit, err = limitQuery(c); err != nil {
		return Encoded[[]EntryView]{}, err
	}
	list, err := s.deps.Sessions.Messages(c.Request().Context(), caller(c), c.Param("id"), page)
	if err != nil {
		return Encoded[[]EntryView]{}, err
	}
	return encodeEntries(list)
}

func (s *Server) handleBranch(c echo.Context, req *BranchRequest) (SessionView, error) {
	if req.EntryID == "" {
		return SessionView{}, errs.Field("entry_id", "is required")
	}
	sess, err := s.deps.Sessions.Branch(c.Request().Context(), caller(c), c.Param("id"), req.EntryID)
	return sessionView(sess), err
}

func (s *Server) handleFork(c echo.Context, req *ForkSessionRequest) (SessionView, error) {
	sess, err := s.deps.Sessions.Fork(c.Request().Context(), caller(c), c.Param("id"),
		sessions.ForkRequest{MessageID: req.MessageID, Exclusive: req.Exclusive, Label: req.Label})
	return sessionView(sess), err
}

func (s *Server) handleContext(c echo.Context, _ *NoBody) (ContextView, error) {
	ctx := c.Request().Context()
	r, err := s.deps.Sessions.Context(ctx, caller(c), c.Param("id"))
	if err != nil {
		return ContextView{}, err
	}
	spent, err := s.deps.Usage.SessionUsage(ctx, caller(c), c.Param("id"))
	return ContextView{InputTokens: r.InputTokens, CachedTokens: r.CachedTokens, CacheWriteTokens: r.CacheWriteTokens,
		ContextWindow: r.ContextWindow, ConversationTokens: r.ConversationTokens, CompactionTokens: r.CompactionTokens,
		SessionInputTokens: r.SessionInputTokens, Prompt: r.Prompt, Usage: usageTotalsView(spent)}, err
}

func (s *Server) handleSessionRuns(c echo.Context, _ *NoBody) ([]RunSummaryView, error) {
	ctx := c.Request().Context()
	list, err := s.deps.Sessions.Runs(ctx, caller(c), c.Param("id"))
	if err != nil {
		return nil, err
	}
	spent, err := s.deps.Usage.SessionRunsUsage(ctx, caller(c), c.Param("id"))
	return mapAll(list, func(r sessions.RunSummary) RunSummaryView {
		return RunSummaryView{RunID: r.RunID, Question: r.Question, OnPath: r.OnPath, Entries: r.Entries, StartedAt: r.StartedAt,
			LastAt: r.LastAt, Status: string(r.Status), ErrorCode: r.ErrorCode, AgentConfigID: r.AgentConfigID, EndedAt: r.EndedAt,
			Usage: usageTotalsView(spent[r.RunID])}
	}), err
}

// boolQuery reads an optional boolean query parameter. Returns validation.
func boolQuery(c echo.Context, name string) (bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, errs.Field(name, "must be true or false")
	}
	return b, nil
}

// limitQuery reads an optional ?limit= page size: 0 when absent, else a
// positive whole number. How large a page may be is the core service's
// rule. Returns validation.
func limitQuery(c echo.Context) (int, error) {
	raw := c.QueryParam("limit")
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, errs.Field("limit", "must be a whole number of at least 1")
	}
	return n, nil
}

// CompactView says whether a forced compaction folded anything.
type CompactView struct {
	Compacted bool `json:"compacted"`
}

func (s *Server) handleCompact(c echo.Context, _ *NoBody) (CompactView, error) {
	done, err := s.deps.Models.Compact(c.Request().Context(), caller(c), c.Param("id"))
	return CompactView{Compacted: done}, err
}

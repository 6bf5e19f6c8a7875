package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/triggers"
)

// HookPrefix is where webhook deliveries arrive: outside /api/v1, signed
// instead of carrying a token.
const HookPrefix = "/hooks"

// TriggerRequest creates a trigger, or replaces one's spec (its kind stays).
type TriggerRequest struct {
	Name          string               `json:"name,omitempty" doc:"For people; empty = named by what fires it"`
	Kind          domain.TriggerKind   `json:"kind,omitempty" doc:"Required on create; it stays what it was created as"`
	Schedule      string               `json:"schedule,omitempty" doc:"cron only: five fields (minute hour day-of-month month day-of-week), @hourly-style macros, or @every 30m (at least 1m), in the server's time zone (GET /server)"`
	Target        domain.TriggerTarget `json:"target" doc:"workflow: an execution into the session; agent: the brief sent as a message of the session"`
	WorkflowID    string               `json:"workflow_id,omitempty" doc:"The workflow a workflow target starts"`
	AgentConfigID string               `json:"agent_config_id,omitempty" doc:"The agent an agent target asks"`
	SessionID     string               `json:"session_id" doc:"The caller's conversation the work reports into; deleting it deletes the trigger"`
	Brief         string               `json:"brief" doc:"What the started work is asked to do; a webhook's body is appended to it as an external payload"`
	Enabled       *bool                `json:"enabled,omitempty" doc:"Default true; a disabled trigger fires nothing"`
}

func (r TriggerRequest) spec() triggers.Spec {
	return triggers.Spec{Name: r.Name, Kind: r.Kind, Schedule: r.Schedule, Target: r.Target, WorkflowID: r.WorkflowID,
		AgentConfigID: r.AgentConfigID, SessionID: r.SessionID, Brief: r.Brief, Enabled: r.Enabled}
}

// TriggerView is a trigger as read (never its secret).
type TriggerView struct {
	ID            string               `json:"id"`
	Name          string               `json:"name"`
	Kind          domain.TriggerKind   `json:"kind"`
	Schedule      string               `json:"schedule,omitempty"`
	Target        domain.TriggerTarget `json:"target"`
	WorkflowID    string               `json:"workflow_id,omitempty"`
	AgentConfigID string               `json:"agent_config_id,omitempty"`
	SessionID     string               `json:"session_id"`
	Brief         string               `json:"brief"`
	Enabled       bool                 `json:"enabled"`
	HookURL       string               `json:"hook_url,omitempty" doc:"webhook only: where deliveries are POSTed"`
	NextFireAt    *time.Time           `json:"next_fire_at,omitempty" doc:"cron only, while enabled: the next tick"`
	LastFiredAt   *time.Time           `json:"last_fired_at,omitempty" doc:"When it last fired, or tried to"`
	LastError     string               `json:"last_error" doc:"Why the last fire started nothing (the session busy, at its task cap, the target gone); empty when it started something"`
	LastStartedID string               `json:"last_started_id" doc:"The task or run the last fire started; empty when it started nothing"`
	CreatedAt     time.Time            `json:"created_at"`
	UpdatedAt     time.Time            `json:"updated_at"`
}

// TriggerSecretView is a webhook trigger with its signing secret, shown by
// the create and rotate answers only.
type TriggerSecretView struct {
	TriggerView
	Secret string `json:"secret,omitempty" doc:"webhook only: the signing secret, shown in this answer and never again"`
}

// FireView is what a fire started.
type FireView struct {
	RunID string    `json:"run_id" doc:"The run the agent answers in, or the workflow's first step run"`
	Task  *TaskView `json:"task,omitempty" doc:"A workflow target: the execution's task"`
}

func (s *Server) triggerView(c echo.Context, t domain.Trigger) TriggerView {
	v := TriggerView{ID: t.ID, Name: t.Name, Kind: t.Kind, Schedule: t.Schedule, Target: t.Target, WorkflowID: t.WorkflowID,
		AgentConfigID: t.AgentConfigID, SessionID: t.SessionID, Brief: t.Brief, Enabled: t.Enabled, NextFireAt: t.NextFireAt,
		LastFiredAt: t.LastFiredAt, LastError: t.LastError, LastStartedID: t.LastStartedID, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.Kind == domain.TriggerWebhook {
		v.HookURL = s.externalOrigin(c) + HookPrefix + "/" + t.ID
	}
	return v
}

func fireView(f domain.Fired) FireView {
	if f.Task != nil {
		v := taskView(*f.Task)
		return FireView{RunID: f.Task.RunID, Task: &v}
	}
	if f.Run != nil {
		return FireView{RunID: f.Run.ID}
	}
	return FireView{}
}

func (s *Server) triggerRoutes() []Route {
	p := APIPrefix + "/triggers"
	return []Route{
		op(http.MethodGet, p, "listTriggers", "triggers", "The caller's triggers, newest first; admins may list everyone's with all=true",
			http.StatusOK, s.handleListTriggers).
			WithQuery(QueryParam{Name: "all", Type: "boolean", Description: "Admins: every user's triggers"}).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		op(http.MethodPost, p, "createTrigger", "triggers",
			"Add a cron or webhook trigger (at most 50 each); a webhook's signing secret is in this answer only",
			http.StatusCreated, s.handleCreateTrigger).WithRequired("kind", "target", "session_id", "brief").
			WithRefusals(http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getTrigger", "triggers", "One trigger", http.StatusOK, s.handleGetTrigger),
		op(http.MethodPut, p+"/:id", "updateTrigger", "triggers",
			"Replace a trigger's spec (its kind and secret stay); enabling a cron trigger schedules its next tick from now",
			http.StatusOK, s.handleUpdateTrigger).WithRequired("target", "session_id", "brief"),
		op(http.MethodDelete, p+"/:id", "deleteTrigger", "triggers", "Delete a trigger (its owner, or an admin)", http.StatusNoContent,
			s.handleDeleteTrigger),
		op(http.MethodPost, p+"/:id/rotate", "rotateTriggerSecret", "triggers",
			"Mint a webhook trigger a new secret (in this answer only); the old one stops working at once",
			http.StatusOK, s.handleRotateTrigger).WithRefusals(http.StatusBadRequest),
		op(http.MethodPost, p+"/:id/fire", "fireTrigger", "triggers",
			"Fire a trigger now: the task its workflow started, or the run its agent answers in",
			http.StatusCreated, s.handleFireTrigger).WithRefusals(http.StatusBadRequest, http.StatusConflict),
		op(http.MethodPost, HookPrefix+"/:id", "deliverWebhook", "triggers",
			"A signed webhook delivery: X-Timestamp (UNIX seconds, within 5 minutes) and X-Signature-256 = hex HMAC-SHA256(secret, timestamp + \".\" + body); the body (at most 64 KB, any type) is appended to the brief as an external payload. A delivery that fired answers 409 if sent again",
			http.StatusCreated, s.handleDeliver).PublicRoute().WithRawBody(domain.MaxHookBody).
			WithHeaders(QueryParam{Name: triggers.TimestampHeader, Type: "string", Description: "The delivery's time in UNIX seconds"},
				QueryParam{Name: triggers.SignatureHeader, Type: "string", Description: "hex HMAC-SHA256 of timestamp + \".\" + body under the trigger's secret; a sha256= prefix is accepted"}).
			WithRefusals(http.StatusUnauthorized, http.StatusConflict, http.StatusServiceUnavailable),
	}
}

func (s *Server) handleListTriggers(c echo.Context, _ *NoBody) ([]TriggerView, error) {
	all, err := boolQuery(c, "all")
	if err != nil {
		return nil, err
	}
	list, err := s.deps.Triggers.List(c.Request().Context(), caller(c), all)
	return mapAll(list, func(t domain.Trigger) TriggerView { return s.triggerView(c, t) }), err
}

func (s *Server) handleCreateTrigger(c echo.Context, req *TriggerRequest) (TriggerSecretView, error) {
	t, secret, err := s.deps.Triggers.Create(c.Request().Context(), caller(c), req.spec())
	return TriggerSecretView{TriggerView: s.triggerView(c, t), Secret: secret}, err
}

func (s *Server) handleGetTrigger(c echo.Context, _ *NoBody) (TriggerView, error) {
	t, err := s.deps.Triggers.Get(c.Request().Context(), caller(c), c.Param("id"))
	return s.triggerView(c, t), err
}

func (s *Server) handleUpdateTrigger(c echo.Context, req *TriggerRequest) (TriggerView, error) {
	t, err := s.deps.Triggers.Update(c.Request().Context(), caller(c), c.Param("id"), req.spec())
	return s.triggerView(c, t), err
}

func (s *Server) handleDeleteTrigger(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Triggers.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleRotateTrigger(c echo.Context, _ *NoBody) (TriggerSecretView, error) {
	t, secret, err := s.deps.Triggers.RotateSecret(c.Request().Context(), caller(c), c.Param("id"))
	return TriggerSecretView{TriggerView: s.triggerView(c, t), Secret: secret}, err
}

func (s *Server) handleFireTrigger(c echo.Context, _ *NoBody) (FireView, error) {
	f, err := s.deps.Triggers.Fire(c.Request().Context(), caller(c), c.Param("id"))
	return fireView(f), err
}

// handleDeliver checks the webhook budget of the trigger and address
// before looking at the signature, and spends it on a bad one. It is not
// the sign-in budget: bad deliveries never lock the address's sign-ins out.
func (s *Server) handleDeliver(c echo.Context, _ *NoBody) (FireView, error) {
	hook := c.Param("id")
	if err := s.limits.hooks.check(c, hook); err != nil {
		return FireView{}, err
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return FireView{}, bodyReadError(err)
	}
	h := c.Request().Header
	f, err := s.deps.Triggers.Deliver(c.Request().Context(), hook, h.Get(triggers.TimestampHeader),
		h.Get(triggers.SignatureHeader), body)
	if errs.Is(err, errs.Unauthorized) {
		s.limits.hooks.spend(c, hook)
	}
	return fireView(f), err
}

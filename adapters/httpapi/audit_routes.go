package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// AuditRecordView is one record of the audit log.
type AuditRecordView struct {
	Seq        int64     `json:"seq" doc:"The record's place in the log (larger is later)"`
	At         time.Time `json:"at"`
	ActorKind  string    `json:"actor_kind" enum:"actor_kind" doc:"user, webhook, trigger or system"`
	ActorID    string    `json:"actor_id" doc:"The user's (or trigger's) id; empty for an unknown person or the system"`
	ActorName  string    `json:"actor_name" doc:"The username (or the trigger's name) at the time"`
	Address    string    `json:"address" doc:"The client's address, when it came over the network"`
	Action     string    `json:"action" doc:"What was done, <kind>.<verb> (provider.update, token.revoke, signin…)"`
	ObjectKind string    `json:"object_kind"`
	ObjectID   string    `json:"object_id"`
	ObjectName string    `json:"object_name"`
	Outcome    string    `json:"outcome" enum:"audit_outcome"`
	Fields     []string  `json:"fields" doc:"The names of the fields the change set; never their values"`
	Reason     string    `json:"reason,omitempty" doc:"Why a failure failed"`
	Method     string    `json:"method,omitempty" doc:"How a sign-in was made: password, oidc"`
}

func auditRecordView(r domain.AuditRecord) AuditRecordView {
	fields := r.Fields
	if fields == nil {
		fields = []string{}
	}
	return AuditRecordView{Seq: r.Seq, At: r.At, ActorKind: string(r.Actor.Kind), ActorID: r.Actor.ID, ActorName: r.Actor.Name,
		Address: r.Actor.Address, Action: r.Action, ObjectKind: r.ObjectKind, ObjectID: r.ObjectID, ObjectName: r.ObjectName,
		Outcome: string(r.Outcome), Fields: fields, Reason: r.Reason, Method: r.Method}
}

// AuditPageView is a page of the audit log, newest first.
type AuditPageView struct {
	Records    []AuditRecordView `json:"records"`
	NextCursor string            `json:"next_cursor,omitempty" doc:"Pass as cursor for the next (older) page; absent on the last page"`
}

// auditDefaultLimit is a page's size when the query names none.
const auditDefaultLimit = 100

func auditFilters() []QueryParam {
	return []QueryParam{
		{Name: "actor", Type: "string", Description: "Only what this user (or trigger) id did"},
		{Name: "actor_kind", Type: "string", Description: "Only what this kind of actor did: user, webhook, trigger, system"},
		{Name: "kind", Type: "string", Description: "Only records about this kind of object (provider, agent, user, token…)"},
		{Name: "object", Type: "string", Description: "Only records about the object with this id"},
		{Name: "action", Type: "string", Description: "Only this action (provider.update, signin…)"},
		{Name: "since", Type: "string", Description: "Only records made at or after this time (RFC 3339)"},
		{Name: "until", Type: "string", Description: "Only records made before this time (RFC 3339)"},
	}
}

func (s *Server) auditRoutes() []Route {
	p := APIPrefix + "/audit"
	return []Route{
		op(http.MethodGet, p, "listAudit", "audit",
			"The audit log, newest first (admins): sign-ins, tokens, users, every change to configuration, approval decisions, "+
				"refused webhooks — who, when, from where, the object, the outcome and the names of the fields changed. Page with cursor",
			http.StatusOK, s.handleListAudit).WithQuery(append(auditFilters(),
			QueryParam{Name: "limit", Type: "integer", Description: "Records per page; default " + strconv.Itoa(auditDefaultLimit),
				Bound: between(1, domain.AuditPageMax)},
			QueryParam{Name: "cursor", Type: "string", Description: "The next_cursor of the previous page"})...).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		raw(http.MethodGet, p+"/export", "exportAudit", "audit",
			"Every record the filters select, newest first, as JSON Lines (one record per line, as listAudit shows them); admins",
			"application/x-ndjson", s.handleExportAudit).WithQuery(auditFilters()...).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden),
	}
}

// auditQuery reads the filters (and, for a page, the cursor and limit).
func auditQuery(c echo.Context) (domain.AuditQuery, error) {
	q := domain.AuditQuery{ActorID: c.QueryParam("actor"), ActorKind: domain.ActorKind(c.QueryParam("actor_kind")),
		ObjectKind: c.QueryParam("kind"), ObjectID: c.QueryParam("object"), Action: c.QueryParam("action"), Limit: auditDefaultLimit}
	var f errs.FieldErrors
	for name, at := range map[string]*time.Time{"since": &q.Since, "until": &q.Until} {
		if v := c.QueryParam(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				f.Add(name, "must be a time like 2026-12-01T09:00:00Z")
			}
			*at = t
		}
	}
	if v := c.QueryParam("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			f.Add("cursor", "is not a cursor this server gave")
		}
		q.Before = n
	}
	if err := f.Err(); err != nil {
		return q, err
	}
	n, err := limitQuery(c)
	if n > 0 {
		q.Limit = n
	}
	return q, err
}

func (s *Server) handleListAudit(c echo.Context, _ *NoBody) (AuditPageView, error) {
	q, err := auditQuery(c)
	if err != nil {
		return AuditPageView{}, err
	}
	recs, err := s.deps.Audit.List(c.Request().Context(), caller(c), q)
	if err != nil {
		return AuditPageView{}, err
	}
	out := AuditPageView{Records: make([]AuditRecordView, len(recs))}
	for i, r := range recs {
		out.Records[i] = auditRecordView(r)
	}
	if len(recs) == q.Limit {
		out.NextCursor = strconv.FormatInt(recs[len(recs)-1].Seq, 10)
	}
	return out, nil
}

func (s *Server) handleExportAudit(c echo.Context) error {
	q, err := auditQuery(c)
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), caller(c)
	// The first page is read before the answer starts, so a refusal is
	// an error envelope, not a half-written download.
	probe := q
	probe.Limit = 1
	if _, err := s.deps.Audit.List(ctx, p, probe); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/x-ndjson")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="audit.jsonl"`)
	c.Response().WriteHeader(http.StatusOK)
	enc := json.NewEncoder(c.Response())
	err = s.deps.Audit.Export(ctx, p, q, func(r domain.AuditRecord) error { return enc.Encode(auditRecordView(r)) })
	if err != nil {
		s.log.Warn("the audit export stopped", "err", err)
	}
	return nil
}

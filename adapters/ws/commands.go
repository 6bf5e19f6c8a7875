package ws

import (
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
)

// handle runs one client command. Failures answer run.error with a code
// from the run vocabulary; an unknown message gets an error envelope,
// never a closed socket.
func (c *conn) handle(data []byte) {
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil || env.Type == "" {
		c.sendError("validation", "a message is {\"type\":…, \"payload\":{…}}")
		return
	}
	switch env.Type {
	case domain.CommandRunCreate:
		var p domain.RunCreatePayload
		if !c.decode(env, &p) {
			return
		}
		// Success needs no answer: the bus attaches every connection of the
		// user to the new run, this one included.
		_, err := c.bus.d.Runs.Start(c.ctx, c.p, p.SessionID,
			runs.StartRequest{Input: p.Input, AgentConfigID: p.AgentConfigID, ProjectID: p.ProjectID, Plan: p.Plan,
				AttachmentIDs: p.AttachmentIDs, Model: p.Model})
		if err != nil {
			c.runError("", p.SessionID, err, domain.CodeSessionNotFound)
		}
	case domain.CommandRunSubscribe:
		var p domain.RunSubscribePayload
		if c.decode(env, &p) {
			if err := c.attach(p.RunID, p.FromSeq, true); err != nil {
				c.runError(p.RunID, "", err, domain.CodeRunNotFound)
			}
		}
	case domain.CommandRunCancel:
		var p domain.RunCancelPayload
		if c.decode(env, &p) {
			if err := c.bus.d.Runs.Cancel(c.ctx, c.p, p.RunID, p.Mode); err != nil {
				c.runError(p.RunID, "", err, domain.CodeRunNotFound)
			}
		}
	case domain.CommandRunInject:
		var p domain.RunInjectPayload
		if c.decode(env, &p) {
			if err := c.bus.d.Runs.Inject(c.ctx, c.p, p.RunID, p.Queue, p.Input); err != nil {
				c.runError(p.RunID, "", err, domain.CodeRunNotFound)
			}
		}
	case domain.CommandToolApprove, domain.CommandToolReject:
		var p domain.ToolDecisionPayload
		if c.decode(env, &p) {
			c.decide(p, env.Type == domain.CommandToolApprove)
		}
	default:
		c.sendError("validation", "unknown message type "+env.Type)
	}
}

// decode reads a command's payload into v. A payload holding a NUL
// character anywhere is refused as run.error user_error naming the field,
// as a REST body is: no store keeps one alike.
func (c *conn) decode(env Envelope, v any) bool {
	if len(env.Payload) == 0 || json.Unmarshal(env.Payload, v) != nil {
		c.sendError("validation", env.Type+" needs a payload object")
		return false
	}
	if err := domain.CheckJSONNoNUL(env.Payload); err != nil {
		var ids struct {
			RunID     string `json:"run_id"`
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal(env.Payload, &ids)
		if domain.HasNUL(ids.RunID) {
			ids.RunID = ""
		}
		if domain.HasNUL(ids.SessionID) {
			ids.SessionID = ""
		}
		c.runError(ids.RunID, ids.SessionID, err, "")
		return false
	}
	return true
}

// runError reports a refused command in the run vocabulary: a missing
// session or run, a busy session, bad input (user_error), or the error's
// own code.
func (c *conn) runError(runID, sessionID string, err error, notFound string) {
	code := string(errs.CodeOf(err))
	switch errs.CodeOf(err) {
	case errs.NotFound:
		code = notFound
	case errs.Conflict:
		if runID == "" {
			code = domain.CodeSessionBusy
		}
	case errs.Validation:
		code = domain.CodeUserError
	}
	payload, _ := json.Marshal(domain.ErrorPayload{RunID: runID, SessionID: sessionID, Code: code, Message: errs.MessageOf(err)})
	_ = c.send(Envelope{Type: domain.EventError, Payload: payload})
}

// decide answers a pending approval by its tool call; the resumed run's
// events reach every connection through the bus.
func (c *conn) decide(p domain.ToolDecisionPayload, approve bool) {
	a, err := c.bus.d.Runs.ApprovalByCall(c.ctx, c.p, p.ToolCallID)
	if err == nil {
		_, err = c.bus.d.Runs.Decide(c.ctx, c.p, a.ID, approve, p.Scope, p.Reason)
	}
	if err != nil {
		code := domain.CodeApprovalFailed
		switch errs.CodeOf(err) {
		case errs.Conflict:
			code = domain.CodeSessionBusy
		case errs.RateLimited:
			code = string(errs.RateLimited) // max_runs_per_user: decide again when a run ends
		}
		payload, _ := json.Marshal(domain.ErrorPayload{RunID: a.RunID, SessionID: a.SessionID, Code: code, Message: errs.MessageOf(err)})
		_ = c.send(Envelope{Type: domain.EventError, Payload: payload})
	}
}

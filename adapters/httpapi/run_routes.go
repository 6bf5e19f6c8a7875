package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
)

// MaxPreferWait caps Prefer: wait; a longer wait is the events stream's job.
const MaxPreferWait = 600

// StartRunRequest starts a run on a session.
type StartRunRequest struct {
	Input         string   `json:"input" doc:"The user's message; empty answers the history again (regenerate)"`
	AgentConfigID string   `json:"agent_config_id,omitempty" doc:"The agent to run; default the session's"`
	ProjectID     string   `json:"project_id,omitempty" doc:"Binds the session to a project on its first project-carrying run"`
	Plan          *bool    `json:"plan,omitempty" doc:"Enter (true) or leave (false) the planning phase; absent leaves it"`
	AttachmentIDs []string `json:"attachment_ids,omitempty" doc:"Images the message carries: ids from POST /attachments, at most 8; the input may then be empty"`
	Model         string   `json:"model,omitempty" doc:"A model for this answer only, in place of the agent's own (same provider; one name, at most 200 characters); the transcript notes it"`
}

// RunErrorView is how a run failed.
type RunErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunStateView answers a start, a wait, a cancel or an inject.
type RunStateView struct {
	RunID       string        `json:"run_id"`
	SessionID   string        `json:"session_id"`
	Status      string        `json:"status" enum:"run_status"`
	FinalOutput *string       `json:"final_output,omitempty" doc:"With Prefer: wait, when the run completed in time"`
	Error       *RunErrorView `json:"error,omitempty" doc:"With Prefer: wait, when the run failed in time"`
}

// RunView is a run as read.
type RunView struct {
	RunID         string `json:"run_id"`
	SessionID     string `json:"session_id"`
	Status        string `json:"status" enum:"run_status"`
	LastSeq       int64  `json:"last_seq"`
	AgentConfigID string `json:"agent_config_id,omitempty"`
	ProjectID     string `json:"project_id,omitempty"`
	// Task is present only for a background task's run.
	Task *domain.TaskLink `json:"task,omitempty" doc:"The task this run is an attempt of, with the parent linkage its run.started carries"`
	// Error is present only for a run that ended in error.
	Error *RunErrorView   `json:"error,omitempty" doc:"How the run failed, as its run.error said: present only when status is error"`
	Usage UsageTotalsView `json:"usage" doc:"The run's model calls so far (its title and compactions included): tokens and cost"`
}

// CancelRunRequest stops a run; the body may be omitted (abort).
type CancelRunRequest struct {
	Mode domain.CancelMode `json:"mode,omitempty" doc:"abort (default) stops now; graceful finishes the current turn"`
}

// InjectRunRequest feeds input into a live run.
type InjectRunRequest struct {
	Queue domain.QueueMode `json:"queue" required:"true"`
	Input string           `json:"input" required:"true"`
}

func (s *Server) runRoutes() []Route {
	p := APIPrefix + "/runs/:id"
	start := op(http.MethodPost, APIPrefix+"/sessions/:id/runs", "startRun", "runs",
		"Start a run; with Prefer: wait=N hold up to N seconds (capped at 600): 200 when it ends or pauses, 202 when it is still running. "+
			"With Accept: text/event-stream the answer is the run's events from its first (run.started, naming the run), as GET /runs/{id}/events sends them",
		http.StatusCreated, s.handleStartRun).WithRefusals(http.StatusConflict)
	start.StreamType = "text/event-stream"
	start.AltStatuses = []int{http.StatusOK, http.StatusAccepted}
	start = start.WithHeaders(QueryParam{Name: "Prefer", Type: "string", Description: "wait=N (RFC 7240)"})
	return []Route{
		start,
		op(http.MethodGet, p, "getRun", "runs", "A run: live, or its stored record once finished (last_seq is the last event it sent)", http.StatusOK, s.handleGetRun),
		raw(http.MethodGet, p+"/events", "streamRunEvents", "runs",
			"The run's events as Server-Sent Events: id is the sequence; resume with Last-Event-ID or from_seq; closes after run.output, run.error or run.cancelled",
			"text/event-stream", s.handleRunEvents).
			WithQuery(QueryParam{Name: "from_seq", Type: "integer", Description: "The last sequence already held", Bound: atLeast(0)}).
			WithHeaders(QueryParam{Name: "Last-Event-ID", Type: "integer", Bound: atLeast(0),
				Description: "The last sequence already held (what an EventSource resends); wins over from_seq"}).
			WithRefusals(http.StatusBadRequest),
		op(http.MethodPost, p+"/cancel", "cancelRun", "runs", "Cancel a live run", http.StatusOK, s.handleCancelRun).
			WithOptionalBody().WithRefusals(http.StatusConflict),
		op(http.MethodPost, p+"/inject", "injectRun", "runs", "Inject input into a live run", http.StatusOK, s.handleInjectRun).
			WithRefusals(http.StatusConflict),
	}
}

func (s *Server) handleStartRun(c echo.Context, req *StartRunRequest) (RunStateView, error) {
	wait, hasWait, err := preferWait(c.Request().Header.Get("Prefer"))
	if err != nil {
		return RunStateView{}, err
	}
	p := caller(c)
	streamed := wantsSSE(c.Request())
	ctx := c.Request().Context()
	if streamed {
		// The stream is taken before the run starts: a caller at its
		// stream limit is refused with nothing started.
		var release func()
		if ctx, release, err = s.openStream(c); err != nil {
			return RunStateView{}, err
		}
		defer release()
	}
	run, err := s.deps.Runs.Start(ctx, p, c.Param("id"),
		runs.StartRequest{Input: req.Input, AgentConfigID: req.AgentConfigID, ProjectID: req.ProjectID, Plan: req.Plan,
			AttachmentIDs: req.AttachmentIDs, Model: req.Model})
	if err != nil {
		return RunStateView{}, err
	}
	if streamed {
		sub, err := s.deps.Runs.Subscribe(ctx, p, run.ID, 0)
		if err != nil {
			return RunStateView{}, err
		}
		defer sub.Close()
		c.Response().Header().Set("Content-Location", MountOf(c.Request().Context()).Prefix+APIPrefix+"/runs/"+run.ID)
		return RunStateView{}, writeSSE(ctx, c, http.StatusCreated, sub)
	}
	view := RunStateView{RunID: run.ID, SessionID: run.SessionID, Status: string(domain.RunRunning)}
	if !hasWait {
		return view, nil
	}
	c.Response().Header().Set("Preference-Applied", "wait="+strconv.Itoa(wait))
	ended, err := s.awaitRun(c.Request().Context(), p, run.ID, time.Duration(wait)*time.Second, &view)
	if err != nil {
		return view, err
	}
	status := http.StatusAccepted
	if ended {
		status = http.StatusOK
	}
	return view, c.JSON(status, view)
}

// awaitRun follows a run until it ends or pauses (filling view), or until
// the wait passes. It reports whether the run ended or paused in time.
func (s *Server) awaitRun(ctx context.Context, p domain.Principal, runID string, wait time.Duration, view *RunStateView) (bool, error) {
	sub, err := s.deps.Runs.Subscribe(ctx, p, runID, 0)
	if err != nil {
		return false, err
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return false, nil // the wait passed (or the client left): still running
		}
		switch ev.Type {
		case domain.EventOutput:
			var out domain.OutputPayload
			decodePayload(ev, &out)
			view.Status, view.FinalOutput = string(domain.RunCompleted), &out.FinalOutput
			return true, nil
		case domain.EventError:
			var e domain.ErrorPayload
			decodePayload(ev, &e)
			view.Status, view.Error = string(domain.RunError), &RunErrorView{Code: e.Code, Message: e.Message}
			return true, nil
		case domain.EventCancelled:
			view.Status = string(domain.RunCancelled)
			return true, nil
		case domain.EventInterrupted:
			view.Status = string(domain.RunInterrupted)
			return true, nil
		}
	}
}

// preferWait reads wait=N from a Prefer header (RFC 7240). A wait past
// MaxPreferWait is honoured up to the cap (Preference-Applied says how
// long), as the contract caps N rather than refusing it. Returns validation
// for a wait that is not a number of seconds.
func preferWait(header string) (int, bool, error) {
	for _, pref := range strings.FieldsFunc(header, func(r rune) bool { return r == ',' || r == ';' }) {
		name, value, _ := strings.Cut(strings.TrimSpace(pref), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "wait") {
			continue
		}
		digits := strings.Trim(strings.TrimSpace(value), `"`)
		n, err := strconv.Atoi(digits)
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(digits, "-") {
			n, err = MaxPreferWait, nil // more seconds than an int holds: still just "long"
		}
		if err != nil || n < 0 {
			return 0, false, errs.Field("Prefer", "wait must be a whole number of seconds (at most %d are honoured)", MaxPreferWait)
		}
		return min(n, MaxPreferWait), true, nil
	}
	return 0, false, nil
}

func (s *Server) handleGetRun(c echo.Context, _ *NoBody) (RunView, error) {
	ctx := c.Request().Context()
	r, err := s.deps.Runs.Get(ctx, caller(c), c.Param("id"))
	if err != nil {
		return RunView{}, err
	}
	v := RunView{RunID: r.ID, SessionID: r.SessionID, Status: string(r.Status), LastSeq: r.LastSeq,
		AgentConfigID: r.AgentConfigID, ProjectID: r.ProjectID}
	if r.Status == domain.RunError {
		v.Error = &RunErrorView{Code: r.ErrorCode, Message: r.ErrorMessage}
	}
	spent, err := s.deps.Usage.RunUsage(ctx, caller(c), r.ID)
	if err != nil {
		return v, err
	}
	v.Usage = usageTotalsView(spent)
	if s.deps.Tasks != nil {
		t, ok, err := s.deps.Tasks.ByRun(ctx, r.ID)
		if err != nil {
			return v, err
		}
		if ok {
			v.Task = t.Link()
		}
	}
	return v, nil
}

func (s *Server) handleCancelRun(c echo.Context, req *CancelRunRequest) (RunStateView, error) {
	p, id := caller(c), c.Param("id")
	if err := s.deps.Runs.Cancel(c.Request().Context(), p, id, req.Mode); err != nil {
		return RunStateView{}, err
	}
	return s.runState(c, p, id)
}

func (s *Server) handleInjectRun(c echo.Context, req *InjectRunRequest) (RunStateView, error) {
	p, id := caller(c), c.Param("id")
	if err := s.deps.Runs.Inject(c.Request().Context(), p, id, req.Queue, req.Input); err != nil {
		return RunStateView{}, err
	}
	return s.runState(c, p, id)
}

func (s *Server) runState(c echo.Context, p domain.Principal, id string) (RunStateView, error) {
	r, err := s.deps.Runs.Get(c.Request().Context(), p, id)
	return RunStateView{RunID: r.ID, SessionID: r.SessionID, Status: string(r.Status)}, err
}

func decodePayload(ev domain.Event, v any) { _ = json.Unmarshal(ev.Payload, v) }

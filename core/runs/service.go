// Package runs executes agents server-side: the runner drives the
// model/tool loop on the hub's root context (so no client connection can
// cancel a run by going away), with approvals, plans, guardrails and
// handoffs; every event goes out through the hub.
package runs

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/follow"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/core/runcap"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// Deps are what the run engine works with.
type Deps struct {
	Hub        *hub.Hub
	Sessions   Sessions
	Runs       ports.RunStore
	Config     ports.ConfigReader
	Settings   *settings.Service
	Guardrails Guardrails
	Traces     ports.TraceStore
	Approvals  ports.ApprovalStore
	// Models resolves providers and makes the calls around a run's turns:
	// the session's title, compaction.
	Models Models
	// Sandboxes binds projects and runs the sandbox tools; nil serves no
	// projects.
	Sandboxes *sandboxes.Service
	// Toolsets are where tools come from — the project's sandbox, the
	// task verbs, workflow authoring, skills, MCP, the program's Go tools —
	// in the order their tools are offered; the built-ins (tools.Builtins)
	// come first, always.
	Toolsets []tools.Toolset
	// Tasks decides workflow steps' approvals (the task manager, given
	// here built; it gets the engine it starts runs on once both exist:
	// tasks.Manager.AttachEngine, the one link made after construction);
	// nil runs no background tasks.
	Tasks approvals.Steps
	// Listeners hear of every run's pause, resume and end, in this order
	// (the task manager, the watchers): one list, told on every path.
	Listeners []Listener
	// Attachments serves the images messages carry; nil refuses them.
	Attachments Attachments
	LLM         ports.LLM
	IDs         ports.IDs
	// Replica is this server process's id on the replica roll: the runs it
	// starts or resumes carry it, so commands and failover find their
	// owner.
	Replica string
	// Fenced reports whether this replica is fenced — the database has not
	// taken its heartbeat for too long, so another replica may soon take
	// its runs over: none starts, and those running stop at their next
	// turn, tool call or fragment (nil: never; the roll also stops them).
	Fenced func() bool
	// Peers reach the other replicas sharing the store: a command for a
	// run another replica runs goes there (nil: this one serves alone).
	Peers remote.Peers
	Clock ports.Clock
	Log   *slog.Logger
	// Observer hears of every trace span stored (metrics, trace export);
	// nil: nobody. How runs end reaches it as a listener (traces.EndsTo).
	Observer ports.RunObserver
	// CheckpointEvery bounds how much of a streaming answer a crash can
	// lose (0: DefaultCheckpointEvery).
	CheckpointEvery time.Duration
}

// Service starts, steers and stops runs.
type Service struct {
	d    Deps
	gate *approvals.Service // lists the pending decisions
	// builder readies a run's agent: endpoint, instructions, tools.
	builder *agents.Builder
	desk    *approvals.Desk       // where paused runs' decisions land
	follow  *follow.Runs          // reads runs and follows their events
	remote  *remote.Remote        // the runs other replicas execute
	trust   *approvals.TrustStore // the decisions' grants
	root    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	live    map[string]*liveRun
	// ending are the runs here whose outcome is decided and whose slot
	// is not yet let go: their end is being recorded.
	ending map[string]struct{}
}

// liveRun is a run executing now.
type liveRun struct {
	run      domain.Run
	planning bool                // the session's planning phase for this run
	history  []domain.Entry      // the history its start read (nil: the loop reads it)
	titleIt  bool                // the session is untitled: name it from this run's input
	bound    bool                // this run bound the session's project: announce it
	resume   *resumeData         // set when the run continues after a pause
	task     *domain.TaskLink    // a task's attempt: run.started carries it
	source   string              // the input's source: "" a person, task_notification a wake-up
	model    string              // a model chosen for this run in place of its agent's
	images   []domain.Attachment // the images the user's message carries
	agent    *domain.Agent       // the agent as Start read it (nil: set-up reads it)
	// taskSession says whether the run's session is a task's, as its
	// launch read the session (nil: read at set-up, as a resumed run does).
	taskSession *bool
	// compactFirst folds the session before the first turn (a workflow
	// step's compact_before).
	compactFirst bool
	ctx          context.Context
	cancel       context.CancelFunc
	graceful     atomic.Bool
	pausing      atomic.Bool            // run.interrupted is out; the session is about to be free
	stopWhy      atomic.Pointer[string] // why it was cancelled, when not by its owner
	// gone ends even what outlives a cancel (the session's title call)
	// when the run's session or owner is being deleted; see stop.
	gone     context.Context
	goneStop context.CancelFunc
	mu       sync.Mutex
	queue    []injection
	injected int
}

type injection struct {
	queue domain.QueueMode
	input string
}

// New returns a Service whose runs live on their own root context: no
// request's context ever reaches a run.
func New(d Deps) *Service {
	root, stop := context.WithCancel(context.Background())
	d.Toolsets = append([]tools.Toolset{tools.Builtins{}}, d.Toolsets...)
	if d.CheckpointEvery <= 0 {
		d.CheckpointEvery = DefaultCheckpointEvery
	}
	gate := approvals.New(approvals.Deps{Store: d.Approvals, Sessions: d.Sessions, Settings: d.Settings, Toolsets: d.Toolsets,
		Clock: d.Clock, Log: d.Log})
	builder := agents.NewBuilder(agents.BuildDeps{Config: d.Config, Endpoints: d.Models, Settings: d.Settings, Guardrails: d.Guardrails,
		Toolsets: d.Toolsets})
	s := &Service{d: d, gate: gate, trust: gate.Trust(), builder: builder, follow: follow.New(d.Hub, d.Runs, d.Peers != nil),
		remote: remote.New(d.Peers, d.Runs, d.Hub, d.Replica), root: root, stop: stop, live: map[string]*liveRun{},
		ending: map[string]struct{}{}}
	s.desk = approvals.NewDesk(approvals.DeskDeps{Gate: gate, Hub: d.Hub, Store: d.Approvals, Runs: d.Runs, Sessions: d.Sessions,
		Lifecycle: listeners(d.Listeners), Steps: d.Tasks, Replica: d.Replica, Clock: d.Clock,
		Resume: func(run domain.Run, state domain.PauseState, decided approvals.Decided) {
			s.launchResumed(&liveRun{run: run, planning: state.Planning, resume: &resumeData{state: state, decided: decided}})
		}})
	return s
}

// Hub is the service's event hub.
func (s *Service) Hub() *hub.Hub { return s.d.Hub }

// StartRequest is what starts a run.
type StartRequest struct {
	Input         string
	AgentConfigID string
	ProjectID     string
	Plan          *bool
	// AttachmentIDs are images (uploaded attachments of the caller's) the
	// user's message carries.
	AttachmentIDs []string
	// Model answers this run in place of the agent's own model ("" keeps it).
	Model string
}

// Start begins a run on a session the caller owns and returns at once; the
// run goes on server-side. An empty input answers the history (regenerate).
// Returns not_found (session), validation (agent, project, input), conflict
// (a live run holds the session), rate_limited (the owner has
// max_runs_per_user live runs) or unavailable (draining).
func (s *Service) Start(ctx context.Context, p domain.Principal, sessionID string, req StartRequest) (domain.Run, error) {
	if err := s.notFenced(); err != nil {
		return domain.Run{}, err
	}
	sess, err := s.d.Sessions.Get(ctx, p, sessionID)
	if err != nil {
		return domain.Run{}, err
	}
	if sess.IsTaskSession() {
		return domain.Run{}, errs.E(errs.Conflict, "this is a background task's conversation: its task runs it (stop or retry the task instead)")
	}
	agentID := req.AgentConfigID
	if agentID == "" {
		agentID = sess.AgentConfigID
	}
	if agentID == "" {
		return domain.Run{}, errs.Field("agent_config_id", "the session has no agent: name one")
	}
	a, err := s.d.Config.FindAgent(ctx, agentID)
	if errs.Is(err, errs.NotFound) || (err == nil && !a.VisibleTo(p)) {
		return domain.Run{}, errs.Field("agent_config_id", "no such agent")
	}
	if err != nil {
		return domain.Run{}, err
	}
	if err := domain.CheckRunModel(req.Model); err != nil {
		return domain.Run{}, err
	}
	// The first project-carrying run binds the session's project; after
	// that the bound value rules and the client's is ignored.
	bindTo := ""
	if sess.ProjectID == "" && req.ProjectID != "" {
		if s.d.Sandboxes == nil {
			return domain.Run{}, errs.Field("project_id", "no such project")
		}
		if _, err := s.d.Sandboxes.OwnProject(ctx, p, req.ProjectID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return domain.Run{}, errs.Field("project_id", "no such project")
			}
			return domain.Run{}, err
		}
		bindTo = req.ProjectID
	}
	// The images the message carries: the caller's, at most the per-message cap.
	var images []domain.Attachment
	if len(req.AttachmentIDs) > 0 && s.d.Attachments == nil {
		return domain.Run{}, errs.Field("attachment_ids", "this server takes no images")
	} else if len(req.AttachmentIDs) > 0 {
		if images, err = s.d.Attachments.ForMessage(ctx, p, req.AttachmentIDs); err != nil {
			return domain.Run{}, err
		}
	}
	if strings.TrimSpace(req.Input) == "" && len(images) == 0 && sess.LastSeq == 0 {
		return domain.Run{}, errs.Field("input", "is required: the session has no history to answer")
	}
	// Refused past the cap before a pause is set aside for it.
	limit, err := runcap.Admit(ctx, s.d.Settings, s.d.Runs, p.User.ID)
	if err != nil {
		return domain.Run{}, err
	}
	// A new message abandons a pause: its waiting calls are recorded as not
	// run and a late decision finds nothing.
	s.awaitLetGo(ctx, sessionID)
	if _, busy := s.d.Hub.Busy(sessionID); !busy {
		if err := s.desk.Supersede(ctx, sessionID); err != nil {
			return domain.Run{}, err
		}
	}
	now := s.d.Clock.Now()
	run := domain.Run{ID: s.d.IDs.NewID(), SessionID: sessionID, OwnerID: p.User.ID, AgentConfigID: agentID, SeqMark: hub.MarkAhead,
		ProjectID: sess.ProjectID, Input: req.Input, Status: domain.RunRunning, CreatedAt: now, UpdatedAt: now, Replica: s.d.Replica}
	if err := s.d.Hub.Claim(sessionID, run.ID, p.User.ID); err != nil {
		return domain.Run{}, err
	}
	bound := false
	if bindTo != "" {
		if run.ProjectID, bound, err = s.d.Sandboxes.Bind(ctx, p, sessionID, bindTo); err != nil {
			s.d.Hub.Release(sessionID, run.ID)
			return domain.Run{}, err
		}
	}
	b, err := s.begin(ctx, run, req.Plan, images, limit, transcript.ChoiceNote(run.ID, sess, a, req.Model))
	if err != nil {
		s.d.Hub.Release(sessionID, run.ID)
		return domain.Run{}, err
	}
	a.Model = cmp.Or(req.Model, a.Model)
	s.launch(&liveRun{run: run, planning: b.Planning, history: b.History, bound: bound, images: images, taskSession: new(sess.IsTaskSession()),
		titleIt: sess.Name == "" && strings.TrimSpace(run.Input) != "", agent: &a, model: req.Model})
	return run, nil
}

// begin records the run before anything is announced, in one
// transaction: the session's agent and planning phase, the notes that lead
// it, the user's message, the run row — refused past the owner's limit of
// live runs. It returns the planning phase the run works in.
func (s *Service) begin(ctx context.Context, run domain.Run, plan *bool, images []domain.Attachment, limit int, entries []domain.Entry) (sessions.Begun, error) {
	if strings.TrimSpace(run.Input) != "" || len(images) > 0 {
		entries = append(entries, userEntry(run.Input, run.ID, images...))
	}
	return s.d.Sessions.BeginRunWith(ctx, run, plan, entries, runcap.In(ctx, run.OwnerID, limit, nil))
}

// userEntry is the user's message: its text and the images it carries (by
// reference; storing the entry binds them to the session).
func userEntry(text, runID string, images ...domain.Attachment) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceUser, RunID: runID,
		Item: domain.UserMessage(text, images)}
}

// launch announces the run and starts its loop on the root context.
func (s *Service) launch(lr *liveRun) {
	run := lr.run
	s.track(lr)
	// The row was written with its first seq mark: no write until an
	// event passes it.
	s.d.Hub.Premark(run.ID, run.SeqMark)
	s.d.Hub.Publish(run.ID, domain.NewEvent(domain.EventRunStarted,
		domain.RunStartedPayload{RunID: run.ID, SessionID: run.SessionID, Input: run.Input, Source: lr.source, Attachments: lr.images}.WithTask(lr.task)))
	if lr.bound {
		s.d.Hub.Publish(run.ID, domain.NewEvent(domain.EventProjectBound,
			domain.ProjectBoundPayload{SessionID: run.SessionID, ProjectID: run.ProjectID}))
	}
	go s.execute(lr)
}

// awaitLetGo waits until a run here that is letting go of the session —
// it announced its pause, or its outcome is decided and its end is being
// recorded — has let go, or until ctx ends. Whoever read that end (a
// task's failed status, a pause's approvals) may start the next run at
// once rather than be refused. A run still working is not waited for, nor
// one past AwaitPause's bound (its end waits for a store that does not
// answer): the caller is told the conversation is busy.
func (s *Service) awaitLetGo(ctx context.Context, sessionID string) {
	holder, busy := s.d.Hub.Busy(sessionID)
	if !busy {
		return
	}
	s.mu.Lock()
	lr := s.live[holder]
	_, ending := s.ending[holder]
	s.mu.Unlock()
	if ending || (lr != nil && lr.pausing.Load()) {
		s.desk.AwaitPause(ctx, sessionID, holder)
	}
}

// launchResumed continues a paused run: no new run.started — the decision's
// events continue the run's own sequence.
func (s *Service) launchResumed(lr *liveRun) {
	s.track(lr)
	go s.execute(lr)
}

func (s *Service) track(lr *liveRun) {
	lr.ctx, lr.cancel = context.WithCancel(s.root)
	// Not a child of root: nothing need cancel it, and a title it bounds is
	// bounded by titleBudget anyway.
	lr.gone, lr.goneStop = context.WithCancel(context.Background())
	s.mu.Lock()
	s.live[lr.run.ID] = lr
	s.wg.Add(1)
	s.mu.Unlock()
}

// Get returns a run the caller owns, with its stream's head while the hub
// holds it (follow.Runs.Get). Returns not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, runID string) (domain.Run, error) {
	return s.follow.Get(ctx, p, runID)
}

// Subscribe attaches the caller to a run's events after fromSeq, from the
// hub or the run's stored record (follow.Runs.Subscribe).
func (s *Service) Subscribe(ctx context.Context, p domain.Principal, runID string, fromSeq int64) (*hub.Subscription, error) {
	return s.follow.Subscribe(ctx, p, runID, fromSeq)
}

func (s *Service) liveRun(p domain.Principal, runID string) (*liveRun, error) {
	s.mu.Lock()
	lr := s.live[runID]
	s.mu.Unlock()
	if lr == nil || lr.run.OwnerID != p.User.ID {
		if info, ok := s.d.Hub.Info(runID); ok && info.OwnerID == p.User.ID {
			s.mu.Lock()
			_, ending := s.ending[runID]
			s.mu.Unlock()
			if ending && info.Live {
				return nil, errs.E(errs.Conflict, "the run has ended and its end is being recorded (the database is not answering yet)")
			}
			return nil, errs.E(errs.Conflict, "the run has already ended")
		}
		return nil, errs.E(errs.NotFound, "run not found")
	}
	return lr, nil
}

// Cancel stops a run: a live one abort (default) at once or graceful after
// the current turn, a paused one at once (its waiting calls recorded as not
// run); either way it ends cancelled. Returns not_found, validation for an
// unknown mode, conflict when the run already ended.
func (s *Service) Cancel(ctx context.Context, p domain.Principal, runID string, mode domain.CancelMode) error {
	if mode != "" && !domain.Known(mode) {
		return errs.Field("mode", "must be %s", domain.OrList(mode.Values()))
	}
	if run, err := s.d.Runs.FindRun(ctx, runID); err == nil && run.OwnerID == p.User.ID && run.Status == domain.RunInterrupted {
		return s.desk.EndPause(ctx, run, "stopped", "")
	}
	lr, err := s.liveRun(p, runID)
	if err != nil {
		return s.remote.Forward(ctx, p, runID, err, remote.Command{Op: remote.OpCancel, Mode: mode})
	}
	cancelLive(lr, mode)
	return nil
}

// cancelLive stops a run executing here: at once, or after its turn.
func cancelLive(lr *liveRun, mode domain.CancelMode) {
	if mode == domain.CancelGraceful {
		lr.graceful.Store(true)
		return
	}
	lr.cancel()
}

// Inject queues input into a live run: steer and next_turn reach it at the
// next turn boundary, follow_up starts a new exchange when this one ends.
// Returns not_found, validation, conflict when the run already ended.
func (s *Service) Inject(ctx context.Context, p domain.Principal, runID string, queue domain.QueueMode, input string) error {
	if !domain.Known(queue) {
		return errs.Field("queue", "must be %s", domain.OrList(queue.Values()))
	}
	if strings.TrimSpace(input) == "" {
		return errs.Field("input", "is required")
	}
	lr, err := s.liveRun(p, runID)
	if err != nil {
		return s.remote.Forward(ctx, p, runID, err, remote.Command{Op: remote.OpInject, Queue: queue, Input: input})
	}
	return injectLive(lr, queue, input)
}

// injectLive queues input into a run executing here.
func injectLive(lr *liveRun, queue domain.QueueMode, input string) error {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.pausing.Load() {
		return errs.E(errs.Conflict, "the run is pausing for a decision: decide its tool calls, then send this input again")
	}
	lr.queue = append(lr.queue, injection{queue: queue, input: input})
	return nil
}

// Drain refuses new runs; live ones go on.
func (s *Service) Drain() { s.d.Hub.Drain() }

// Shutdown waits for live runs to end until ctx ends, then cancels the
// rest and waits for them to record it; finally every stream is closed.
func (s *Service) Shutdown(ctx context.Context) {
	s.Drain()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.stop()
		<-done
	}
	s.d.Hub.Close()
}

package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

var (
	owner    = Principal{User: User{ID: "ann", Role: RoleMember}}
	stranger = Principal{User: User{ID: "bob", Role: RoleMember}}
	root     = Principal{User: User{ID: "root", Role: RoleAdmin}}
)

// TestPersonalRecordsAreTheirOwnersAlone holds the owner checks of the
// records that are no one else's business: a stranger — an admin too,
// except where an admin manages — finds nothing, never a refusal.
func TestPersonalRecordsAreTheirOwnersAlone(t *testing.T) {
	sess := Session{OwnerID: "ann"}
	proj := Project{OwnerID: "ann"}
	for _, tc := range []struct {
		what  string
		check func(Principal) error
		admin bool // whether an admin passes
	}{
		{"a session's content", sess.CheckContent, false},
		{"a session's deletion", sess.CheckDelete, true},
		{"a run", Run{OwnerID: "ann"}.CheckOwner, false},
		{"an approval", Approval{OwnerID: "ann"}.CheckOwner, false},
		{"a project's tree", proj.CheckOwner, false},
		{"a project's management", proj.CheckManage, true},
	} {
		if err := tc.check(owner); err != nil {
			t.Errorf("%s, by its owner: %v", tc.what, err)
		}
		if err := tc.check(stranger); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("%s, by a stranger: %v, want not_found", tc.what, err)
		}
		if err := tc.check(root); (err == nil) != tc.admin || (err != nil && errs.CodeOf(err) != errs.NotFound) {
			t.Errorf("%s, by an admin: %v, want passing %v", tc.what, err, tc.admin)
		}
	}
	if err := root.RequireAdmin(); err != nil {
		t.Fatal(err)
	}
	if err := owner.RequireAdmin(); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member as admin: %v", err)
	}
}

// TestAProjectIsNamedAndItsEnvironmentChecked holds ValidateProject and
// the storage names a project's id gives.
func TestAProjectIsNamedAndItsEnvironmentChecked(t *testing.T) {
	big := strings.Repeat("v", 64<<10+1)
	tooMany := make([]EnvVar, MaxProjectEnv+1)
	for i := range tooMany {
		tooMany[i] = EnvVar{Name: "V" + strings.Repeat("X", i%100) + string(rune('A'+i/100))}
	}
	for _, tc := range []struct {
		name  string
		env   []EnvVar
		field string
	}{
		{" ", nil, "name"},
		{strings.Repeat("n", 101), nil, "name"},
		{"two\nlines", nil, "name"},
		{"ok", []EnvVar{{Name: "1ABC"}}, "env[0].name"},
		{"ok", []EnvVar{{Name: "A-B"}}, "env[0].name"},
		{"ok", []EnvVar{{Name: "HOME"}, {Name: "HOME"}}, "env[1].name"},
		{"ok", []EnvVar{{Name: "BIG", Value: big}}, "env[0].value"},
		{"ok", tooMany, "env"},
	} {
		if err := ValidateProject(tc.name, tc.env); errs.FieldsOf(err)[tc.field] == "" {
			t.Errorf("project %.20q with %d variables: %v, want a refusal on %s", tc.name, len(tc.env), err, tc.field)
		}
	}
	if err := ValidateProject("  website ", []EnvVar{{Name: "_PATH2", Value: "x"}, {Name: "A"}}); err != nil {
		t.Fatalf("a good project: %v", err)
	}
	p := Project{ID: "0194f3a2-7c1e-7000-8000-00000000abcd"}
	if p.InstanceName() != "agents-00000000abcd" || p.StorageName() != "agents-proj-00000000abcd" {
		t.Fatalf("names %q %q", p.InstanceName(), p.StorageName())
	}
	if (Project{ID: "short"}).InstanceName() != "agents-short" {
		t.Fatal("a short id is not kept whole")
	}
}

// TestATasksStatusDecidesWhatMayHappenToIt holds the task status rules:
// which statuses are final and owe a wake-up, and what retry and dismiss
// refuse.
func TestATasksStatusDecidesWhatMayHappenToIt(t *testing.T) {
	for _, tc := range []struct {
		status          TaskStatus
		terminal, wakes bool
	}{
		{TaskWorking, false, false},
		{TaskInputRequired, false, false},
		{TaskCompleted, true, true},
		{TaskFailed, true, true},
		{TaskCancelled, true, false},
	} {
		if tc.status.Terminal() != tc.terminal || tc.status.OwesWakeup() != tc.wakes {
			t.Errorf("%s: terminal %v owes %v", tc.status, tc.status.Terminal(), tc.status.OwesWakeup())
		}
		task := Task{Status: tc.status, Attempt: 1}
		if task.Live() == tc.terminal {
			t.Errorf("%s: live %v", tc.status, task.Live())
		}
		if err := task.CheckDismiss(); (err == nil) != tc.terminal {
			t.Errorf("dismiss a %s task: %v", tc.status, err)
		}
		if err := task.CheckRetry(); (err == nil) != (tc.status == TaskFailed) {
			t.Errorf("retry a %s task: %v", tc.status, err)
		}
	}
	if err := (Task{Status: TaskFailed, Attempt: MaxTaskAttempts}).CheckRetry(); errs.CodeOf(err) != errs.Conflict ||
		!strings.Contains(err.Error(), "all 3 attempts") {
		t.Fatalf("a retry past the attempts: %v", err)
	}

	launched := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	queued := Task{ID: "t1", RunID: "r1", Status: TaskWorking, Label: "research", ParentSessionID: "s", ParentRunID: "pr", ToolCallID: "c",
		Attempt: 2, State: json.RawMessage(`{"step_id":"a"}`)}
	info := queued.Info()
	if !info.Queued || info.MaxAttempts != MaxTaskAttempts || info.TaskID != "t1" || info.Attempt != 2 || string(info.State) != `{"step_id":"a"}` {
		t.Fatalf("a queued task's info %+v", info)
	}
	queued.LaunchedAt = &launched
	if queued.Queued() || queued.Info().Queued {
		t.Fatal("a launched task is still queued")
	}
	if l := queued.Link(); *l != (TaskLink{TaskID: "t1", ParentSessionID: "s", ParentRunID: "pr", ToolCallID: "c", Label: "research"}) {
		t.Fatalf("link %+v", l)
	}
	p := RunStartedPayload{RunID: "r1"}.WithTask(queued.Link())
	if p.TaskID != "t1" || p.ParentSessionID != "s" || p.Label != "research" || p.RunID != "r1" {
		t.Fatalf("a task run's start %+v", p)
	}
	if p := (RunStartedPayload{RunID: "r1"}).WithTask(nil); p.TaskID != "" {
		t.Fatalf("a chat run's start carries a task: %+v", p)
	}
}

// TestRunAndEventEndingsAgree holds which statuses end a run and which
// events end its stream (run.interrupted does neither).
func TestRunAndEventEndingsAgree(t *testing.T) {
	for status, final := range map[RunStatus]bool{RunRunning: false, RunInterrupted: false, RunCompleted: true, RunError: true, RunCancelled: true} {
		if status.Final() != final {
			t.Errorf("run status %s final %v", status, status.Final())
		}
	}
	for typ, final := range map[string]bool{EventOutput: true, EventError: true, EventCancelled: true, EventInterrupted: false, EventMessage: false} {
		if (Event{Type: typ}).Final() != final {
			t.Errorf("event %s final %v", typ, !final)
		}
	}
}

// TestAnEventIsOneEnvelope holds the {type, seq, payload} frame both
// transports carry, with and without a seq or a payload.
func TestAnEventIsOneEnvelope(t *testing.T) {
	ev := NewEvent(EventMessage, TextPayload{RunID: "r1", Text: `say "hi"`})
	ev.Seq = 7
	var back struct {
		Type    string      `json:"type"`
		Seq     int64       `json:"seq"`
		Payload TextPayload `json:"payload"`
	}
	if err := json.Unmarshal(ev.Envelope(), &back); err != nil || back.Type != EventMessage || back.Seq != 7 || back.Payload.Text != `say "hi"` {
		t.Fatalf("envelope %s: %+v, %v", ev.Envelope(), back, err)
	}
	if got := string((Event{Type: EventGap}).Envelope()); got != `{"type":"run.gap","payload":null}` {
		t.Fatalf("a connection-local event without payload: %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unencodable payload did not panic")
		}
	}()
	NewEvent(EventMessage, func() {})
}

// TestSmallRulesSayWhatTheyPromise holds the one-line rules: session
// names and task sessions, memory bounds, approval gating and scopes,
// workflow gate words and laps, step time, trigger labels, the run cap's
// refusal, roles, token prefixes, the trace truncation marker.
func TestSmallRulesSayWhatTheyPromise(t *testing.T) {
	if ValidateSessionName(strings.Repeat("é", MaxSessionName)) != nil || ValidateSessionName("") != nil {
		t.Error("a session name within bounds was refused")
	}
	if errs.FieldsOf(ValidateSessionName(strings.Repeat("é", MaxSessionName+1)))["name"] == "" ||
		errs.FieldsOf(ValidateSessionName("a\rb"))["name"] == "" {
		t.Error("a long or two-line session name was accepted")
	}
	if !(Session{Hidden: true, ParentSessionID: "p"}).IsTaskSession() || (Session{Hidden: true}).IsTaskSession() ||
		(Session{ParentSessionID: "p"}).IsTaskSession() {
		t.Error("IsTaskSession")
	}

	for _, tc := range []struct {
		m     Memory
		field string
	}{
		{Memory{Key: " "}, "key"},
		{Memory{Key: strings.Repeat("k", MaxMemoryKeyLen+1)}, "key"},
		{Memory{Key: "a\nb"}, "key"},
		{Memory{Key: "k", Content: strings.Repeat("x", MaxMemoryContent+1)}, "content"},
		{Memory{Key: strings.Repeat("é", MaxMemoryKeyLen), Content: strings.Repeat("x", MaxMemoryContent)}, ""},
	} {
		err := tc.m.Validate()
		if tc.field == "" && err != nil || tc.field != "" && errs.FieldsOf(err)[tc.field] == "" {
			t.Errorf("memory key %.20q: %v, want a refusal on %q", tc.m.Key, err, tc.field)
		}
	}

	if !Gated([]string{"*"}, "anything") || !Gated([]string{"exec_command"}, "exec_command") || Gated([]string{"exec_command"}, "read_file") || Gated(nil, "x") {
		t.Error("Gated")
	}
	if ValidScope("") != nil || ValidScope(ScopeAll) != nil || !strings.Contains(errs.FieldsOf(ValidScope("forever"))["scope"], "once, same or all") {
		t.Error("ValidScope")
	}

	step := WorkflowStep{}
	if step.PassWord() != DefaultGatePass || step.FailWord() != DefaultGateFail {
		t.Error("the default gate words")
	}
	step.GatePass, step.GateFail = "SHIP", "HOLD"
	if step.PassWord() != "SHIP" || step.FailWord() != "HOLD" {
		t.Error("a step's own gate words")
	}
	if (WorkflowBudget{}).Laps() != DefaultMaxLaps || (WorkflowBudget{MaxLaps: -1}).Laps() != DefaultMaxLaps || (WorkflowBudget{MaxLaps: 7}).Laps() != 7 {
		t.Error("Laps")
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	for _, tc := range []struct {
		r    StepRun
		want time.Duration
	}{
		{StepRun{StartedAt: t0}, 10 * time.Minute},                                                 // running: to now
		{StepRun{StartedAt: t0, EndedAt: at(4 * time.Minute)}, 4 * time.Minute},                    // ended
		{StepRun{StartedAt: t0, PausedAt: at(3 * time.Minute)}, 3 * time.Minute},                   // waiting for a person
		{StepRun{StartedAt: t0, EndedAt: at(5 * time.Minute), WaitedMS: 120_000}, 3 * time.Minute}, // less its waits
		{StepRun{StartedAt: t0, EndedAt: at(time.Minute), WaitedMS: 600_000}, 0},                   // never negative
	} {
		if got := tc.r.Active(t0.Add(10 * time.Minute)); got != tc.want {
			t.Errorf("active %v, want %v for %+v", got, tc.want, tc.r)
		}
	}

	if (Trigger{TriggerSpec: TriggerSpec{Name: "nightly", Kind: TriggerCron}}).Label() != "nightly" ||
		(Trigger{TriggerSpec: TriggerSpec{Kind: TriggerCron, Schedule: "0 3 * * *"}}).Label() != "cron 0 3 * * *" ||
		(Trigger{TriggerSpec: TriggerSpec{Kind: TriggerWebhook}}).Label() != "webhook" {
		t.Error("Trigger.Label")
	}
	if (Fired{Task: &Task{ID: "t"}}).StartedID() != "t" || (Fired{Run: &Run{ID: "r"}}).StartedID() != "r" || (Fired{}).StartedID() != "" {
		t.Error("Fired.StartedID")
	}

	if err := TooManyRuns(4); errs.CodeOf(err) != errs.RateLimited || !strings.Contains(err.Message, "4 runs") || !strings.Contains(err.Message, "max_runs_per_user") {
		t.Errorf("TooManyRuns: %v", err)
	}
	if !RoleAdmin.Valid() || !RoleMember.Valid() || Role("owner").Valid() {
		t.Error("Role.Valid")
	}
	if (User{PasswordHash: "h"}).HasPassword() == (User{}).HasPassword() {
		t.Error("HasPassword")
	}
	prefixes := map[string]bool{}
	for _, k := range []TokenKind{TokenPersonal, TokenSession, TokenLaunch, TokenStatic} {
		p := TokenPrefix(k)
		if !strings.HasPrefix(p, "ags_") || prefixes[p] {
			t.Errorf("the %s prefix %q is not a distinct ags_ prefix", k, p)
		}
		prefixes[p] = true
	}

	var marker struct {
		Truncated  bool `json:"truncated"`
		Bytes      int  `json:"bytes"`
		LimitBytes int  `json:"limit_bytes"`
	}
	if err := json.Unmarshal(TruncationMarker(5000, 4096), &marker); err != nil || !marker.Truncated || marker.Bytes != 5000 || marker.LimitBytes != 4096 {
		t.Errorf("TruncationMarker: %+v, %v", marker, err)
	}
}

// TestAnEnvelopesTypeIsEncodedAsJSONWould: the fast path for plain event
// types and the encoder's way for anything else give json.Marshal's bytes.
func TestAnEnvelopesTypeIsEncodedAsJSONWould(t *testing.T) {
	for _, typ := range []string{EventStep, "", `a"b`, `back\slash`, "tab\there", "<tag>&", "é", "\u2028"} {
		ev := Event{Type: typ, Seq: 3, Payload: json.RawMessage(`{"k":1}`)}
		want, _ := json.Marshal(ev)
		if got := ev.Envelope(); string(got) != string(want) {
			t.Errorf("type %q: envelope %s, json.Marshal %s", typ, got, want)
		}
		if got := ev.AppendEnvelope([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("type %q: appended %s", typ, got)
		}
	}
}

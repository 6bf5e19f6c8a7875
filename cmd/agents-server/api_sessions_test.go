package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// Entries as the run engine writes them.

func userMsg(text, run string) domain.Entry {
	item, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}})
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceUser, RunID: run, Item: item}
}

func assistantMsg(text, run string, usage *domain.Usage) domain.Entry {
	item, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}})
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: run, Item: item, Usage: usage}
}

func toolCall(call, run string) domain.Entry {
	item, _ := json.Marshal(map[string]any{"type": "function_call", "call_id": call, "name": "spawn_task", "arguments": "{}"})
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: run, Item: item}
}

func (h *harness) createSession(token string, body any) httpapi.SessionView {
	h.t.Helper()
	var s httpapi.SessionView
	h.call("POST", "/api/v1/sessions", token, body).want(h.t, 201).decode(h.t, &s)
	return s
}

func (h *harness) appendEntries(sessionID string, entries ...domain.Entry) []domain.Entry {
	h.t.Helper()
	out, err := workbenchparts.Of(h.app.wb).Sessions.Append(context.Background(), sessionID, entries)
	if err != nil {
		h.t.Fatalf("append: %v", err)
	}
	return out
}

func (h *harness) messages(token, sessionID, query string) []httpapi.EntryView {
	h.t.Helper()
	var out []httpapi.EntryView
	h.call("GET", "/api/v1/sessions/"+sessionID+"/messages"+query, token, nil).want(h.t, 200).decode(h.t, &out)
	return out
}

func TestSessionsCRUDAndOwnership(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")
	annAgent := h.createAgent(ann, map[string]any{"name": "mine", "model": "m"})

	s1 := h.createSession(ann, map[string]any{"name": "first", "agent_config_id": annAgent.ID})
	if s1.AgentConfigID != annAgent.ID || s1.ProjectID != "" || s1.Name != "first" {
		t.Fatalf("created = %+v", s1)
	}
	d := h.call("POST", "/api/v1/sessions", bob, map[string]any{"agent_config_id": annAgent.ID}).wantErr(t, 400, "validation")
	if d.Fields["agent_config_id"] == "" {
		t.Fatalf("%+v", d)
	}
	s2 := h.createSession(ann, map[string]any{})
	h.call("POST", "/api/v1/sessions", ann, nil).wantErr(t, 400, "validation") // the body is required

	// Pinned first, then most recent; PATCH is partial, project_id is not writable.
	var patched httpapi.SessionView
	h.call("PATCH", "/api/v1/sessions/"+s1.ID, ann, map[string]any{"pinned": true, "project_id": "p-123"}).want(t, 200).decode(t, &patched)
	if !patched.Pinned || patched.Name != "first" || patched.ProjectID != "" {
		t.Fatalf("patch = %+v", patched)
	}
	h.call("PATCH", "/api/v1/sessions/"+s2.ID, ann, map[string]any{"name": "  second  "}).want(t, 200).decode(t, &patched)
	if patched.Name != "second" || patched.Pinned {
		t.Fatalf("rename = %+v", patched)
	}
	var list []httpapi.SessionView
	h.call("GET", "/api/v1/sessions", ann, nil).want(t, 200).decode(t, &list)
	if len(list) != 2 || list[0].ID != s1.ID || list[1].ID != s2.ID {
		t.Fatalf("list = %+v", list)
	}

	// Another member cannot reach it by any route.
	h.appendEntries(s1.ID, userMsg("hello", "r1"))
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "", nil}, {"PATCH", "", map[string]any{"name": "x"}}, {"DELETE", "", nil}, {"GET", "/messages", nil},
		{"GET", "/context", nil}, {"GET", "/runs", nil}, {"POST", "/fork", nil}, {"POST", "/branch", map[string]any{"entry_id": "x"}},
	} {
		h.call(c.method, "/api/v1/sessions/"+s1.ID+c.path, bob, c.body).wantErr(t, 404, "not_found")
	}
	h.call("GET", "/api/v1/sessions", bob, nil).want(t, 200).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("bob sees %+v", list)
	}
	h.call("GET", "/api/v1/sessions?all=true", bob, nil).wantErr(t, 403, "forbidden")

	// An admin lists everyone's and may delete, but never reads.
	h.call("GET", "/api/v1/sessions?all=true", h.admin, nil).want(t, 200).decode(t, &list)
	if len(list) != 2 {
		t.Fatalf("admin all = %+v", list)
	}
	for _, path := range []string{"", "/messages", "/context", "/runs"} {
		h.call("GET", "/api/v1/sessions/"+s1.ID+path, h.admin, nil).wantErr(t, 404, "not_found")
	}
	h.call("POST", "/api/v1/sessions/"+s1.ID+"/fork", h.admin, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/sessions/"+s1.ID, h.admin, nil).want(t, 204)
	h.call("GET", "/api/v1/sessions/"+s1.ID, ann, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/sessions/"+s2.ID, ann, nil).want(t, 204)
	h.call("DELETE", "/api/v1/sessions/"+s2.ID, ann, nil).wantErr(t, 404, "not_found")
}

func TestMessagesPageFoldAndNeverComeUpShort(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("pat")
	s := h.createSession(tok, map[string]any{"name": "long"})
	// 60 content entries with an update after every third: the updates are
	// rows, but never count toward a page.
	for i := 0; i < 60; i++ {
		e := h.appendEntries(s.ID, userMsg(fmt.Sprintf("m%02d", i), "r"))[0]
		if i%3 == 0 {
			h.appendEntries(s.ID, domain.Entry{Kind: domain.KindUpdate, TargetID: e.ID, Display: &domain.Display{Title: fmt.Sprintf("t%02d", i)}})
		}
	}
	// An update stored BEFORE its target (by call id) still folds.
	h.appendEntries(s.ID, domain.Entry{Kind: domain.KindUpdate, TargetCallID: "call_late", Display: &domain.Display{Title: "late card"}})
	call := h.appendEntries(s.ID, toolCall("call_late", "r"))[0]

	all := h.messages(tok, s.ID, "")
	if len(all) != 61 || all[0].Seq >= all[1].Seq || all[60].ID != call.ID {
		t.Fatalf("all: %d entries", len(all))
	}
	if all[0].Display == nil || all[0].Display.Title != "t00" || all[1].Display != nil || all[60].Display.Title != "late card" {
		t.Fatalf("folding: %+v / %+v / %+v", all[0].Display, all[1].Display, all[60].Display)
	}
	for _, e := range all {
		if e.Kind == domain.KindUpdate || !e.OnPath {
			t.Fatalf("listed %s on_path=%v", e.Kind, e.OnPath)
		}
	}
	// Newest 25, then back by the smallest row id, until the start.
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		q := "?limit=25"
		if cursor != "" {
			q += "&before_id=" + cursor
		}
		page := h.messages(tok, s.ID, q)
		if len(page) == 0 {
			break
		}
		if want := min(25, 61-len(seen)); len(page) != want {
			t.Fatalf("page %d has %d entries, want %d", pages, len(page), want)
		}
		for i := 1; i < len(page); i++ {
			if page[i-1].RowID >= page[i].RowID {
				t.Fatal("a page is not oldest-first")
			}
		}
		ids := []string{}
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		seen = append(ids, seen...)
		cursor = page[0].RowID
	}
	for i := range all {
		if seen[i] != all[i].ID {
			t.Fatalf("paging lost or reordered entry %d", i)
		}
	}
	if p := h.messages(tok, s.ID, "?limit=3"); p[0].Display != nil || p[2].Display.Title != "late card" {
		t.Fatalf("folding on a page: %+v", p)
	}
	other := h.createSession(tok, map[string]any{})
	h.call("GET", "/api/v1/sessions/"+other.ID+"/messages?before_id="+all[5].RowID, tok, nil).wantErr(t, 400, "validation")
	for _, bad := range []string{"0", "-1", "x", "1001"} {
		h.call("GET", "/api/v1/sessions/"+s.ID+"/messages?limit="+bad, tok, nil).wantErr(t, 400, "validation")
	}
	if got := h.messages(tok, other.ID, ""); len(got) != 0 {
		t.Fatalf("empty session lists %d", len(got))
	}
}

func TestBranchRegenerateAndSwitch(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("reg")
	s := h.createSession(tok, map[string]any{})
	u := h.appendEntries(s.ID, userMsg("what is 2+2?", "r1"))[0]
	a1 := h.appendEntries(s.ID, assistantMsg("5", "r1", nil), assistantMsg("(sorry)", "r1", nil))

	// Regenerate: branch back to the user message, then a run with no input.
	h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": u.ID}).want(t, 200)
	a2 := h.appendEntries(s.ID, assistantMsg("4", "r2", nil))[0]
	byID := map[string]httpapi.EntryView{}
	for _, e := range h.messages(tok, s.ID, "") {
		byID[e.ID] = e
	}
	if len(byID) != 4 || byID[a1[0].ID].OnPath || byID[a1[1].ID].OnPath || !byID[a2.ID].OnPath || !byID[u.ID].OnPath {
		t.Fatalf("on_path after regenerate: %+v", byID)
	}
	sib := byID[a2.ID].Siblings
	if sib == nil || sib.Count != 2 || sib.Index != 1 || sib.Heads[0] != a1[0].ID || sib.Tips[0] != a1[1].ID || sib.Tips[1] != a2.ID {
		t.Fatalf("siblings of the new answer = %+v", sib)
	}
	if byID[a1[0].ID].Siblings == nil || byID[a1[0].ID].Siblings.Index != 0 || byID[a1[1].ID].Siblings != nil || byID[u.ID].Siblings != nil {
		t.Fatal("siblings on the wrong entries")
	}
	if byID[a2.ID].ParentID != u.ID {
		t.Fatalf("the listed parent skips the branch marker: %q", byID[a2.ID].ParentID)
	}
	// A page holding only the newest attempt still knows its older sibling.
	if last := h.messages(tok, s.ID, "?limit=1"); len(last) != 1 || last[0].Siblings == nil || last[0].Siblings.Heads[0] != a1[0].ID {
		t.Fatalf("newest page siblings = %+v", last)
	}

	// Switch back to attempt 1 by branching to its tip: its whole attempt returns.
	h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": sib.Tips[0]}).want(t, 200)
	for _, e := range h.messages(tok, s.ID, "") {
		if want := e.ID != a2.ID; e.OnPath != want {
			t.Fatalf("after switching, %s on_path = %v", e.ID, e.OnPath)
		}
	}
	// The regenerate's run answered the same question.
	var runs []httpapi.RunSummaryView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/runs", tok, nil).want(t, 200).decode(t, &runs)
	if len(runs) != 2 || runs[0].Question != "what is 2+2?" || runs[1].Question != "what is 2+2?" || runs[0].Entries != 3 ||
		!runs[0].OnPath || runs[1].OnPath {
		t.Fatalf("runs = %+v", runs)
	}

	for _, bad := range []map[string]any{{"entry_id": "nope"}, {"entry_id": ""}, {}} {
		h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, bad).wantErr(t, 400, "validation")
	}
	// A branch marker is not a place to continue from.
	row, err := workbenchparts.Of(h.app.wb).DB.FindSession(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": row.TipID}).wantErr(t, 400, "validation")
	if d.Fields["entry_id"] == "" {
		t.Fatalf("%+v", d)
	}
}

// Editing the first message branches from the root: the edit becomes a
// second first message beside the original, and the model sees only it.
func TestBranchFromTheRootEditsTheFirstMessage(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	_, url := startScripted(t)
	tok := h.member("editor")
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "e", "model": "echo"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	ask := func(input string) string {
		t.Helper()
		var v httpapi.RunStateView
		h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": input}, "Prefer", "wait=30").want(t, 200).decode(t, &v)
		if v.FinalOutput == nil {
			t.Fatalf("run = %+v", v)
		}
		return *v.FinalOutput
	}
	ask("frist try")
	h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": domain.BranchRoot}).want(t, 200)
	if got := ask("first try"); got != "You said: first try" {
		t.Fatalf("answer = %q", got)
	}
	var users []httpapi.EntryView
	for _, e := range h.messages(tok, s.ID, "") {
		if e.Source == domain.SourceUser {
			users = append(users, e)
		}
	}
	if len(users) != 2 || users[0].OnPath || !users[1].OnPath || users[1].ParentID != "" ||
		users[1].Siblings == nil || users[1].Siblings.Count != 2 || users[1].Siblings.Heads[0] != users[0].ID {
		t.Fatalf("user messages = %+v", users)
	}
	// The original is one switch away, answer and all.
	h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": users[1].Siblings.Tips[0]}).want(t, 200)
	for _, e := range h.messages(tok, s.ID, "") {
		if e.Source == domain.SourceUser && e.OnPath != (e.ID == users[0].ID) {
			t.Fatalf("after switching back, %s on_path = %v", e.ID, e.OnPath)
		}
	}
}

func TestForkCopiesAndRewrites(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("fk")
	agent := h.createAgent(tok, map[string]any{"name": "a", "model": "m"})
	s := h.createSession(tok, map[string]any{"name": "source", "agent_config_id": agent.ID})
	e := h.appendEntries(s.ID, userMsg("one", "r1"), toolCall("c1", "r1"), assistantMsg("two", "r1", nil), userMsg("three", "r2"))
	h.appendEntries(s.ID, domain.Entry{Kind: domain.KindUpdate, TargetID: e[2].ID, Display: &domain.Display{Title: "folded"}})

	var whole httpapi.SessionView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, nil).want(t, 201).decode(t, &whole)
	if whole.ID == s.ID || whole.Name != "source (fork)" || whole.AgentConfigID != agent.ID || whole.OwnerID != s.OwnerID {
		t.Fatalf("fork = %+v", whole)
	}
	src, got := h.messages(tok, s.ID, ""), h.messages(tok, whole.ID, "")
	if len(got) != 4 {
		t.Fatalf("fork has %d entries", len(got))
	}
	srcIDs := map[string]bool{}
	for _, m := range src {
		srcIDs[m.ID] = true
		srcIDs[m.RowID] = true
	}
	for i, m := range got {
		if srcIDs[m.ID] || srcIDs[m.RowID] || srcIDs[m.ParentID] {
			t.Fatalf("fork entry %d points into the source: %+v", i, m)
		}
		if i > 0 && m.ParentID != got[i-1].ID {
			t.Fatalf("fork entry %d parent %q, want %q", i, m.ParentID, got[i-1].ID)
		}
		if string(m.Item) != string(src[i].Item) || !m.OnPath {
			t.Fatalf("fork entry %d differs: %s vs %s", i, m.Item, src[i].Item)
		}
	}
	if got[2].Display == nil || got[2].Display.Title != "folded" {
		t.Fatalf("the update's target was not rewritten: %+v", got[2].Display)
	}

	var incl, excl httpapi.SessionView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, map[string]any{"message_id": e[2].ID, "label": "upto"}).want(t, 201).decode(t, &incl)
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, map[string]any{"message_id": e[2].ID, "exclusive": true}).want(t, 201).decode(t, &excl)
	if incl.Name != "upto" || len(h.messages(tok, incl.ID, "")) != 3 || len(h.messages(tok, excl.ID, "")) != 2 {
		t.Fatal("fork bounds")
	}
	var first httpapi.SessionView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, map[string]any{"message_id": e[0].ID, "exclusive": true}).want(t, 201).decode(t, &first)
	if len(h.messages(tok, first.ID, "")) != 0 {
		t.Fatal("an exclusive fork at the first entry is empty")
	}
	// A fork continues where its boundary was.
	h.appendEntries(incl.ID, userMsg("next", "r9"))
	m := h.messages(tok, incl.ID, "")
	if m[3].ParentID != m[2].ID || !m[3].OnPath {
		t.Fatalf("append after fork: %+v", m[3])
	}
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, map[string]any{"message_id": "nope"}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, map[string]any{"bogus": 1}).wantErr(t, 400, "validation")
	// The source is untouched.
	if len(h.messages(tok, s.ID, "")) != 4 {
		t.Fatal("the source changed")
	}
}

func TestContextReportFollowsTheActiveBranch(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("ctx")
	agent := h.createAgent(tok, map[string]any{"name": "a", "model": "m", "context_window": 128000})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	get := func() httpapi.ContextView {
		var c httpapi.ContextView
		h.call("GET", "/api/v1/sessions/"+s.ID+"/context", tok, nil).want(t, 200).decode(t, &c)
		return c
	}
	if c := get(); c.ContextWindow != 128000 || c.InputTokens != 0 || c.ConversationTokens != 0 || c.Prompt != nil {
		t.Fatalf("empty = %+v", c)
	}
	u := h.appendEntries(s.ID, userMsg("q1", "r1"))[0]
	h.appendEntries(s.ID, assistantMsg("a1", "r1", &domain.Usage{InputTokens: 900, OutputTokens: 100, TotalTokens: 1000}))
	h.appendEntries(s.ID, userMsg("q2", "r2"), assistantMsg("a2", "r2", &domain.Usage{InputTokens: 1500, OutputTokens: 50, CachedTokens: 800, TotalTokens: 1550}))
	c := get()
	if c.InputTokens != 1500 || c.CachedTokens != 800 || c.SessionInputTokens != 2400 || c.CompactionTokens != 1550 || c.ConversationTokens == 0 {
		t.Fatalf("after two calls = %+v", c)
	}
	before := c.ConversationTokens
	// Back to q1 and a cheaper answer: the window shrinks to that branch, the
	// session total keeps every call.
	h.call("POST", "/api/v1/sessions/"+s.ID+"/branch", tok, map[string]any{"entry_id": u.ID}).want(t, 200)
	h.appendEntries(s.ID, assistantMsg("b1", "r3", &domain.Usage{InputTokens: 700, OutputTokens: 10, TotalTokens: 710}))
	c = get()
	if c.InputTokens != 700 || c.SessionInputTokens != 3100 || c.ConversationTokens >= before || c.CompactionTokens != 710 {
		t.Fatalf("after branch = %+v (before %d)", c, before)
	}
	profile := json.RawMessage(`{"instructions":1200,"tools":{"builtin":300}}`)
	if err := workbenchparts.Of(h.app.wb).DB.SaveContextProfile(context.Background(), s.ID, "r3", profile, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c = get(); string(c.Prompt) != string(profile) {
		t.Fatalf("prompt = %s", c.Prompt)
	}
}

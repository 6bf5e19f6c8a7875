package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// usageRow is one exported call, by column name.
type usageRow map[string]string

func (r usageRow) int(col string) int64 {
	n, _ := strconv.ParseInt(r[col], 10, 64)
	return n
}

// usageCalls reads a CSV export (path: /usage/export or /usage/me/export
// with its query) as rows.
func (h *harness) usageCalls(token, path string) []usageRow {
	h.t.Helper()
	rep := h.call("GET", "/api/v1"+path, token, nil).want(h.t, 200)
	recs, err := csv.NewReader(strings.NewReader(string(rep.Body))).ReadAll()
	if err != nil || len(recs) == 0 {
		h.t.Fatalf("export %s: %v (%q)", path, err, rep.Body)
	}
	var out []usageRow
	for _, rec := range recs[1:] {
		row := usageRow{}
		for i, col := range recs[0] {
			row[col] = rec[i]
		}
		out = append(out, row)
	}
	return out
}

// toolLoop scripts model: steps tool calls (todo_write), then an answer,
// every call reporting in input and out output tokens, streaming each
// delta delayMS apart.
func toolLoop(model *scripted.Server, name string, steps int, in, out, delayMS int) {
	var st []scripted.Step
	for i := range steps {
		st = append(st, scripted.Step{Text: fmt.Sprintf("step %d.", i+1), Usage: &scripted.Usage{InputTokens: in, OutputTokens: out},
			ChunkSize: 2, DelayMS: delayMS,
			ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}})
	}
	st = append(st, scripted.Step{Text: "done", Usage: &scripted.Usage{InputTokens: in, OutputTokens: out}})
	model.SetScript(name, scripted.Script{Exchanges: []scripted.Exchange{{Steps: st}}})
}

func (h *harness) putPrice(provType, model string, in, cached, out float64) {
	h.t.Helper()
	h.call("PUT", "/api/v1/prices", h.admin, map[string]any{"provider_type": provType, "model": model, "input_per_mtok": in,
		"cached_input_per_mtok": cached, "output_per_mtok": out, "source": "test", "as_of": "2026-12-01"}).want(h.t, 200)
}

// TestEveryModelCallIsRecordedOnceWithItsCost: a tool loop's calls, the
// title, a retried call and the fallback that answered are each one
// record, charged to the person, priced from the table (a model with no
// price counts tokens and no cost), and the run and the conversation
// carry their sums.
func TestEveryModelCallIsRecordedOnceWithItsCost(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("metered", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "Noting.", Usage: &scripted.Usage{InputTokens: 1000, CachedTokens: 200, OutputTokens: 100, ReasoningTokens: 30},
			ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}},
		{Text: "Noted.", Usage: &scripted.Usage{InputTokens: 1200, OutputTokens: 50}},
	}}}})
	model.SetScript("flaky", oneStep(scripted.Step{Error: &scripted.Failure{Status: 503, Message: "overloaded"}}))
	model.SetScript("steady", oneStep(scripted.Step{Text: "answered by the fallback", Usage: &scripted.Usage{InputTokens: 10, OutputTokens: 5}}))
	h := startServer(t, testConfig(t))
	h.putPrice("openai", "metered", 1, 0.5, 2)
	tok := h.member("payer")
	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	agent := h.createAgent(tok, map[string]any{"name": "metered", "model": "metered", "provider_id": prov.ID})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	run, events := h.runEvents(tok, s.ID, map[string]any{"input": "note it"})
	if lastEvent(events).Type != domain.EventOutput {
		t.Fatalf("the run ended with %s", lastEvent(events).Type)
	}
	calls := h.usageCalls(tok, "/usage/me/export")
	var turns, titles []usageRow
	for _, c := range calls {
		switch c["kind"] {
		case "chat":
			turns = append(turns, c)
		case "title":
			titles = append(titles, c)
		default:
			t.Errorf("a call of kind %q: %v", c["kind"], c)
		}
	}
	if len(turns) != 2 || len(titles) != 1 {
		t.Fatalf("recorded %d turn calls and %d titles, want 2 and 1: %v", len(turns), len(titles), calls)
	}
	first, second := turns[0], turns[1]
	if first.int("input_tokens") != 1000 || first.int("cached_input_tokens") != 200 || first.int("output_tokens") != 100 ||
		first.int("reasoning_tokens") != 30 || first["run_id"] != run || first["session_id"] != s.ID || first["agent_id"] != agent.ID ||
		first["provider_id"] != prov.ID || first["model"] != "metered" || first["outcome"] != "ok" {
		t.Errorf("first call %v", first)
	}
	// (800 × $1 + 200 × $0.50 + 100 × $2) per million; (1200 × $1 + 50 × $2).
	if first["cost_usd"] != "0.001100" || second["cost_usd"] != "0.001300" {
		t.Errorf("costs %s and %s, want 0.001100 and 0.001300", first["cost_usd"], second["cost_usd"])
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, tok, nil).want(t, 200).decode(t, &r)
	if r.Usage.Calls < 2 || r.Usage.InputTokens < 2200 || math.Abs(r.Usage.CostUSD-(0.0011+0.0013+costOf(titles[0]))) > 1e-9 {
		t.Errorf("the run's usage %+v", r.Usage)
	}
	// Prometheus counts them by provider type and model, never by person
	// (the title call was answered with the script's first step: 30 + 30).
	metrics := string(h.call("GET", "/metrics", h.admin, nil).want(t, 200).Body)
	if !strings.Contains(metrics, `agents_model_tokens_total{model="metered",provider="openai",type="reasoning"} 60`+"\n") ||
		!strings.Contains(metrics, `agents_model_cost_dollars_total{model="metered",provider="openai"}`) || strings.Contains(metrics, "payer") {
		t.Errorf("usage metrics:\n%s", grepLines(metrics, "agents_model_"))
	}
	var listed []httpapi.RunSummaryView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/runs", tok, nil).want(t, 200).decode(t, &listed)
	if len(listed) != 1 || listed[0].Usage != r.Usage {
		t.Errorf("the conversation's runs %+v, the run's usage %+v", listed, r.Usage)
	}
	var cv httpapi.ContextView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/context", tok, nil).want(t, 200).decode(t, &cv)
	if cv.Usage != r.Usage {
		t.Errorf("the conversation's usage %+v, the run's %+v", cv.Usage, r.Usage)
	}

	// A retried call and the fallback that answered: one record each, the
	// failures with no tokens (the provider reported none) and no price.
	anth := h.createProvider(tok, protocols(url)["anthropic"])
	resilient := h.createAgent(tok, map[string]any{"name": "resilient", "model": "flaky", "provider_id": anth.ID,
		"resilience": map[string]any{"retry_enabled": true, "retry_policy": map[string]any{"max_retries": 1, "initial_backoff_ms": 1, "max_backoff_ms": 5},
			"fallback_models": []any{map[string]any{"provider_id": prov.ID, "model": "steady"}}}})
	s2 := h.createSession(tok, map[string]any{"agent_config_id": resilient.ID, "name": "named"})
	run2, events := h.runEvents(tok, s2.ID, map[string]any{"input": "go"})
	if lastEvent(events).Type != domain.EventOutput {
		t.Fatalf("the resilient run ended with %s", lastEvent(events).Type)
	}
	var got []string
	for _, c := range h.usageCalls(tok, "/usage/me/export") {
		if c["run_id"] == run2 {
			got = append(got, c["model"]+":"+c["outcome"]+":"+c["cost_usd"])
		}
	}
	if strings.Join(got, " ") != "flaky:error: flaky:error: steady:ok:" {
		t.Errorf("the resilient run's calls %v, want two failed tries of flaky and steady's answer, none priced", got)
	}
	// The admin's report sees the member's calls, by person and by model.
	var rep httpapi.UsageReportView
	h.call("GET", "/api/v1/usage?group_by=person", h.admin, nil).want(t, 200).decode(t, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Label != "payer" || rep.Rows[0].Calls != int64(len(calls))+3 || rep.Totals.Calls != rep.Rows[0].Calls ||
		rep.Totals.UnpricedCalls != 3 {
		t.Errorf("by person: %+v", rep)
	}
	h.call("GET", "/api/v1/usage?group_by=model", h.admin, nil).want(t, 200).decode(t, &rep)
	if len(rep.Rows) < 2 || rep.Rows[0].Key != "openai/metered" || rep.Rows[0].Label != "metered" {
		t.Errorf("by model: %+v", rep.Rows)
	}
	h.call("GET", "/api/v1/usage", tok, nil).wantErr(t, 403, "forbidden")
	h.call("GET", "/api/v1/usage/me?group_by=person", tok, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/usage/me?from=2026-13-01", tok, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/usage/me?from=2026-12-02&to=2026-12-01", tok, nil).wantErr(t, 400, "validation")
}

// costOf reads an exported call's cost (0 without a price).
func costOf(r usageRow) float64 {
	v, _ := strconv.ParseFloat(r["cost_usd"], 64)
	return v
}

// TestABudgetStopsAToolLoopAtItsNextCall: a member's daily token budget is
// checked before every call: past 80% the run says so once, and the call
// after the limit is crossed is never sent — the run ends budget_exceeded
// naming the budget and when it resets, the turns before it kept. The
// next run is refused at its first call; an admin is not held to a
// default budget unless the setting says so.
func TestABudgetStopsAToolLoopAtItsNextCall(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	toolLoop(model, "loop", 6, 1000, 100, 0)
	h := startServer(t, testConfig(t))
	tok := h.member("thrifty")
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)
	var b httpapi.BudgetView
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "person", "subject_id": me.ID, "period": "day", "unit": "tokens", "limit": 1300}).
		want(t, 201).decode(t, &b)
	if b.SubjectName != "thrifty" || b.Consumed != 0 || b.Limit != 1300 {
		t.Fatalf("created %+v", b)
	}
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "looper", "model": "loop"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "named: no title call"})
	before := len(modelCalls(model))
	_, events := h.runEvents(tok, s.ID, map[string]any{"input": "loop"})
	var near []domain.DiagnosticPayload
	for _, ev := range events {
		if ev.Type == domain.EventDiagnostic {
			if d := payload[domain.DiagnosticPayload](t, ev.Event); d.Type == "budget_near" {
				near = append(near, d)
			}
		}
	}
	last := lastEvent(events)
	if last.Type != domain.EventError {
		t.Fatalf("the run ended with %s", last.Type)
	}
	e := payload[domain.ErrorPayload](t, last.Event)
	if e.Code != "budget_exceeded" || !strings.Contains(e.Message, "thrifty's daily budget") || !strings.Contains(e.Message, "resets") {
		t.Errorf("run.error %+v", e)
	}
	if len(near) != 1 || near[0].Details["percent"] != "84" {
		t.Errorf("budget_near diagnostics %+v, want one at 84%%", near)
	}
	if n := len(modelCalls(model)) - before; n != 2 {
		t.Errorf("%d model calls reached the provider, want 2: the third was refused before it was sent", n)
	}
	var msgs []httpapi.EntryView
	h.call("GET", "/api/v1/sessions/"+s.ID+"/messages", tok, nil).want(t, 200).decode(t, &msgs)
	var text strings.Builder
	for _, m := range msgs {
		text.Write(m.Item)
	}
	if !strings.Contains(text.String(), "step 1.") || !strings.Contains(text.String(), "step 2.") {
		t.Errorf("the turns before the limit were not kept: %s", text.String())
	}
	var mine httpapi.MyUsageView
	h.call("GET", "/api/v1/usage/me", tok, nil).want(t, 200).decode(t, &mine)
	if len(mine.Budgets) != 1 || mine.Budgets[0].Consumed != 2200 || mine.Budgets[0].Percent != 169 || mine.Totals.Calls != 2 {
		t.Errorf("usage/me %+v", mine)
	}
	// The next run is refused at its first call.
	before = len(modelCalls(model))
	_, events = h.runEvents(tok, s.ID, map[string]any{"input": "again"})
	if last := lastEvent(events); last.Type != domain.EventError || payload[domain.ErrorPayload](t, last.Event).Code != "budget_exceeded" {
		t.Errorf("the next run ended with %+v", last)
	}
	if len(modelCalls(model)) != before {
		t.Error("a refused run's call reached the provider")
	}
	// A raised limit lets the member go on.
	h.call("PATCH", "/api/v1/budgets/"+b.ID, h.admin, map[string]any{"limit": 1_000_000}).want(t, 200)
	if _, events = h.runEvents(tok, s.ID, map[string]any{"input": "again"}); lastEvent(events).Type != domain.EventOutput {
		t.Errorf("after the raise the run ended with %s", lastEvent(events).Type)
	}

	// A default budget holds every member, not admins unless they say so.
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "default", "period": "month", "unit": "usd", "limit": 0.000001}).want(t, 201)
	h.putPrice("openai", "loop", 1, 0, 1)
	adminAgent := h.agentOn(h.admin, protocols(url)["openai-chat"], map[string]any{"name": "admin-loop", "model": "loop"})
	as := h.createSession(h.admin, map[string]any{"agent_config_id": adminAgent, "name": "admin"})
	if _, events = h.runEvents(h.admin, as.ID, map[string]any{"input": "loop"}); lastEvent(events).Type != domain.EventOutput {
		t.Errorf("an admin was held to a default budget: %s", lastEvent(events).Type)
	}
	h.call("PUT", "/api/v1/settings/budgets_apply_to_admins", h.admin, map[string]string{"value": "true"}).want(t, 200)
	if _, events = h.runEvents(h.admin, as.ID, map[string]any{"input": "loop"}); lastEvent(events).Type != domain.EventError {
		t.Errorf("with budgets_apply_to_admins an admin's run ended with %s", lastEvent(events).Type)
	}
}

// TestBudgetsAreAdminsAndValidated: only admins write budgets and prices;
// bad input is refused naming the field, a duplicate is a conflict.
func TestBudgetsAreAdminsAndValidated(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("plain")
	h.call("GET", "/api/v1/budgets", tok, nil).wantErr(t, 403, "forbidden")
	h.call("POST", "/api/v1/budgets", tok, map[string]any{"scope": "default", "period": "day", "unit": "tokens", "limit": 5}).wantErr(t, 403, "forbidden")
	h.call("PUT", "/api/v1/prices", tok, map[string]any{"provider_type": "openai", "model": "m", "input_per_mtok": 1, "output_per_mtok": 1}).wantErr(t, 403, "forbidden")
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"scope": "person", "period": "day", "unit": "tokens", "limit": 5}, "subject_id"},
		{map[string]any{"scope": "person", "subject_id": "nobody", "period": "day", "unit": "tokens", "limit": 5}, "subject_id"},
		{map[string]any{"scope": "default", "subject_id": "x", "period": "day", "unit": "tokens", "limit": 5}, "subject_id"},
		{map[string]any{"scope": "default", "period": "year", "unit": "tokens", "limit": 5}, "period"},
		{map[string]any{"scope": "default", "period": "day", "unit": "tokens", "limit": 0}, "limit"},
		{map[string]any{"scope": "default", "period": "day", "unit": "tokens", "limit": 2.5}, "limit"},
	} {
		rep := h.call("POST", "/api/v1/budgets", h.admin, c.body)
		if rep.Status != 400 || !strings.Contains(string(rep.Body), `"`+c.field+`"`) {
			t.Errorf("%v: %d %s, want 400 naming %s", c.body, rep.Status, rep.Body, c.field)
		}
	}
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "default", "period": "day", "unit": "tokens", "limit": 5}).want(t, 201)
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "default", "period": "day", "unit": "tokens", "limit": 9}).wantErr(t, 409, "conflict")
	var list httpapi.BudgetsView
	h.call("GET", "/api/v1/budgets", h.admin, nil).want(t, 200).decode(t, &list)
	if len(list.Budgets) != 1 || list.Budgets[0].Limit != 5 || list.Budgets[0].SubjectName != "each member" {
		t.Fatalf("budgets %+v", list)
	}
	h.call("DELETE", "/api/v1/budgets/"+list.Budgets[0].ID, h.admin, nil).want(t, 204)
	h.call("DELETE", "/api/v1/budgets/"+list.Budgets[0].ID, h.admin, nil).wantErr(t, 404, "not_found")
	// Each change is in the audit log, with the admin as its actor; the
	// refused ones left nothing.
	recs := h.auditLog("&kind=budget")
	for _, action := range []string{"budget.create", "budget.delete"} {
		if r := findAudit(t, recs, action, list.Budgets[0].ID, ""); r.ActorName != "admin" || r.Outcome != "success" {
			t.Errorf("%s recorded as %+v", action, r)
		}
	}
	if len(recs) != 2 {
		t.Errorf("%d budget records, want 2 (a refused write leaves none): %+v", len(recs), recs)
	}

	// The seeded price table names each figure's source and day; an
	// admin's price replaces the one of its model.
	var prices httpapi.PricesView
	h.call("GET", "/api/v1/prices", h.admin, nil).want(t, 200).decode(t, &prices)
	seeded := map[string]httpapi.PriceView{}
	for _, p := range prices.Prices {
		if p.Source == "" || p.AsOf == "" {
			t.Errorf("a seeded price without its source or day: %+v", p)
		}
		seeded[p.ProviderType+"/"+p.Model] = p
	}
	if p, ok := seeded["openai/gpt-4o"]; !ok || p.InputPerMTok != 2.5 || p.OutputPerMTok != 10 {
		t.Errorf("gpt-4o seeded as %+v", p)
	}
	h.putPrice("openai", "gpt-4o", 3, 1, 12)
	if r := findAudit(t, h.auditLog("&kind=price"), "price.put", "openai/gpt-4o", ""); r.ActorName != "admin" ||
		strings.Join(r.Fields, ",") != "as_of,cached_input_per_mtok,input_per_mtok,output_per_mtok,source" {
		t.Errorf("price.put recorded as %+v", r)
	}
	h.call("GET", "/api/v1/prices", h.admin, nil).want(t, 200).decode(t, &prices)
	for _, p := range prices.Prices {
		if p.ProviderType == "openai" && p.Model == "gpt-4o" && (p.InputPerMTok != 3 || p.ID != seeded["openai/gpt-4o"].ID) {
			t.Errorf("after the put: %+v", p)
		}
	}
	rep := h.call("PUT", "/api/v1/prices", h.admin, map[string]any{"provider_type": "openai", "model": "m", "input_per_mtok": -1, "output_per_mtok": 1, "as_of": "today"})
	if rep.Status != 400 || !strings.Contains(string(rep.Body), "input_per_mtok") || !strings.Contains(string(rep.Body), "as_of") {
		t.Errorf("a bad price: %d %s", rep.Status, rep.Body)
	}
}

// TestConcurrentRunsOvershootABudgetByAtMostOneCallEach: twenty runs in
// a tool loop against one small agent budget: each stops at its next
// call once the budget is used up, so together they pass the limit by at
// most one call each.
func TestConcurrentRunsOvershootABudgetByAtMostOneCallEach(t *testing.T) {
	t.Parallel()
	const runs, perCall, limit = 20, 1100, 5000
	model, url := startScripted(t)
	toolLoop(model, "race", 30, 1000, 100, 5)
	h := startServer(t, testConfig(t))
	var toks []string
	for i := range 4 {
		toks = append(toks, h.member(fmt.Sprintf("racer%d", i)))
	}
	gp := protocols(url)["openai-responses"]
	gp["scope"] = "global"
	prov := h.createProvider(h.admin, gp)
	var agent httpapi.AgentView
	h.call("POST", "/api/v1/agents", h.admin, map[string]any{"name": "shared", "model": "race", "provider_id": prov.ID, "scope": "global"}).
		want(t, 201).decode(t, &agent)
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "agent", "subject_id": agent.ID, "period": "week", "unit": "tokens", "limit": limit}).want(t, 201)
	var wg sync.WaitGroup
	ends := make(chan string, runs)
	for i := range runs {
		tok := toks[i%len(toks)]
		s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID, "name": fmt.Sprint("race ", i)})
		wg.Go(func() {
			_, events := h.runEvents(tok, s.ID, map[string]any{"input": "go"})
			ends <- payload[domain.ErrorPayload](t, lastEvent(events).Event).Code
		})
	}
	wg.Wait()
	close(ends)
	for code := range ends {
		if code != "budget_exceeded" {
			t.Errorf("a run ended with %q, want budget_exceeded", code)
		}
	}
	var rep httpapi.UsageReportView
	h.call("GET", "/api/v1/usage?group_by=agent", h.admin, nil).want(t, 200).decode(t, &rep)
	spent := rep.Totals.InputTokens + rep.Totals.OutputTokens
	if spent < limit || spent > limit+runs*perCall {
		t.Errorf("%d tokens spent against a limit of %d: more than one call (%d) over per run", spent, limit, perCall)
	}
	t.Logf("%d runs spent %d tokens in %d calls against a limit of %d", runs, spent, rep.Totals.Calls, limit)
}

// TestACancelledCallIsRecordedWithWhatTheProviderReported: a call cut
// off mid-stream is one record, cancelled, with the input the provider
// counted when the stream began (Anthropic's message_start).
func TestACancelledCallIsRecordedWithWhatTheProviderReported(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("slow", oneStep(scripted.Step{Text: strings.Repeat("slow ", 200), ChunkSize: 5, DelayMS: 30,
		Usage: &scripted.Usage{InputTokens: 777, OutputTokens: 300}}))
	h := startServer(t, testConfig(t))
	tok := h.member("quitter")
	agent := h.agentOn(tok, protocols(url)["anthropic"], map[string]any{"name": "slow", "model": "slow"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "named"})
	run := h.startRun(tok, s.ID, map[string]any{"input": "go"})
	sse := h.openSSE(tok, run, 0)
	for ev, _ := sse.next(t); ev.Type != domain.EventStep; ev, _ = sse.next(t) {
	}
	h.call("POST", "/api/v1/runs/"+run+"/cancel", tok, nil).want(t, 200)
	if last := sse.all(t); lastEvent(last).Type != domain.EventCancelled {
		t.Fatalf("the run ended with %s", lastEvent(last).Type)
	}
	calls := h.usageCalls(tok, "/usage/me/export")
	if len(calls) != 1 || calls[0]["outcome"] != "cancelled" || calls[0].int("input_tokens") != 777 {
		t.Fatalf("calls %v, want one cancelled with the 777 input tokens counted", calls)
	}
}

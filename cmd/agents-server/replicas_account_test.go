package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
)

// An account deleted on one replica stops its runs on every replica: a
// member's run executing on A ends cancelled (account_deleted) when an
// admin deletes the member on B, before the account's rows go, and both
// replicas' watchers see it end.
func TestReplicasDeletingAnAccountStopsItsRunsEverywhere(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("long", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{slowText(30)}}}})
	a := startReplica(t, url)
	b := startReplica(t, url)
	must := func(t *testing.T, p *process, method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s on %s: %d %s\nits log:\n%s", method, path, p.url, code, raw, p.stderr)
		}
		return out
	}

	// The member's provider is the scripted model, on a loopback address.
	must(t, a, "PUT", "/api/v1/settings/outbound_allow_private", map[string]string{"value": "true"}, 200)
	user := must(t, b, "POST", "/api/v1/auth/users", map[string]string{"username": "leaver", "password": "password-leaver"}, 201)["id"].(string)
	_, _, raw := a.call(t, "POST", "/api/v1/auth/login", map[string]string{"username": "leaver", "password": "password-leaver"})
	var login httpapi.LoginResponse
	if err := json.Unmarshal(raw, &login); err != nil || login.Token == "" {
		t.Fatalf("the member's sign-in answered %s", raw)
	}
	onA, onB := &process{url: a.url, token: login.Token}, &process{url: b.url, token: login.Token}
	prov := must(t, onA, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)["id"]
	agent := must(t, onA, "POST", "/api/v1/agents", map[string]any{"name": "long", "model": "long", "provider_id": prov}, 201)["id"]
	sid := must(t, onA, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent, "name": "s"}, 201)["id"].(string)
	runID := must(t, onA, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "stream please"}, 201)["run_id"].(string)

	fromA, fromB := onA.openSSE(t, runID, 0), onB.openSSE(t, runID, 0)
	for name, s := range map[string]*sseStream{"A": fromA, "B": fromB} {
		if ev, ok := s.next(t); !ok || ev.Type != domain.EventRunStarted {
			t.Fatalf("%s's stream began with %v", name, ev.Type)
		}
	}
	// B follows the run live: a delta A streams reaches it.
	var seen []string
	for {
		ev, ok := fromB.next(t)
		if !ok {
			t.Fatalf("B's stream ended before the delete, after %v\nA's log:\n%s\nB's log:\n%s", seen, a.stderr, b.stderr)
		}
		seen = append(seen, ev.Type+" "+string(ev.Event.Payload))
		if ev.Type == domain.EventStep {
			break
		}
	}

	must(t, b, "DELETE", "/api/v1/auth/users/"+user, nil, 204)
	for name, s := range map[string]*sseStream{"A": fromA, "B": fromB} {
		rest := eventsOf(t, s)
		last := typeAt(rest, len(rest)-1)
		if last != domain.EventCancelled || !strings.Contains(string(rest[len(rest)-1].Payload), `"account_deleted"`) {
			t.Fatalf("%s's stream ended with %s, want run.cancelled account_deleted\nA's log:\n%s", name, last, a.stderr)
		}
	}
	// The run ended before its rows went with the account: nothing of it
	// is left on either replica, and the member is signed out everywhere.
	for _, p := range []*process{a, b} {
		must(t, p, "GET", "/api/v1/runs/"+runID, nil, 404)
	}
	must(t, onA, "GET", "/api/v1/auth/me", nil, 401)
	must(t, onB, "GET", "/api/v1/auth/me", nil, 401)
	if log := a.stderr.String(); strings.Contains(log, "recording a run's end failed") {
		t.Fatalf("A could not record the run's end:\n%s", log)
	}
}

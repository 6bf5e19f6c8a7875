package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/triggers"
)

// One signed delivery sent to two replicas at once — a sender's retry that
// the load balancer routed elsewhere, or a captured request replayed —
// starts one run: the replay guard is a row in the shared database, not a
// replica's memory. Sent again to either once that run ended, it is still
// refused.
func TestReplicasFireOneSignedDeliveryOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("hooked", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "delivery handled"}}}}})
	a := startReplica(t, url)
	b := startReplica(t, url)
	must := func(p *process, method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s on %s: %d %s", method, path, p.url, code, raw)
		}
		return out
	}
	prov := must(a, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)["id"]
	agent := must(a, "POST", "/api/v1/agents", map[string]any{"name": "hooked", "model": "hooked", "provider_id": prov}, 201)["id"]
	sid := must(a, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent, "name": "ci"}, 201)["id"].(string)
	hook := must(a, "POST", "/api/v1/triggers", map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": agent,
		"session_id": sid, "brief": "A build failed."}, 201)

	body := []byte(`{"build":"failed"}`)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	signature := "sha256=" + triggers.Sign(hook["secret"].(string), stamp, body)
	deliver := func(p *process) (int, string) {
		req, _ := http.NewRequest("POST", p.url+"/hooks/"+hook["id"].(string), bytes.NewReader(body))
		req.Header.Set(triggers.TimestampHeader, stamp)
		req.Header.Set(triggers.SignatureHeader, signature)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}

	codes := make([]int, 2)
	answers := make([]string, 2)
	var wg sync.WaitGroup
	for i, p := range []*process{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], answers[i] = deliver(p)
		}()
	}
	wg.Wait()
	fired := slices.Index(codes, 201)
	if fired < 0 || codes[1-fired] != 409 || !strings.Contains(answers[1-fired], "fired already") {
		t.Fatalf("one delivery to both replicas answered %v: %q", codes, answers)
	}

	// Once its run ended, the same delivery is still a replay on either.
	var runs []map[string]any
	slowPoll(t, func() bool {
		_, _, raw := b.call(t, "GET", "/api/v1/sessions/"+sid+"/runs", nil)
		json.Unmarshal(raw, &runs)
		return len(runs) == 1 && runs[0]["status"] == "completed"
	})
	for _, p := range []*process{b, a} {
		if code, answer := deliver(p); code != 409 || !strings.Contains(answer, "fired already") {
			t.Fatalf("the delivery sent again to %s: %d %s", p.url, code, answer)
		}
	}
	_, _, raw := a.call(t, "GET", "/api/v1/sessions/"+sid+"/runs", nil)
	json.Unmarshal(raw, &runs)
	if len(runs) != 1 {
		t.Fatalf("one delivery started %d runs: %s", len(runs), raw)
	}
}

package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/internal/testenv"
)

// signAndPost is what a sender runs: sign timestamp + "." + body with
// openssl, post it with curl; it prints the HTTP status last.
const signAndPost = `set -euo pipefail
TS=$(date +%s)
SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
curl -sS -X POST "$HOOK_URL" -H "Content-Type: application/json" -H "X-Timestamp: $TS" -H "X-Signature-256: sha256=$SIG" \
  --data "$BODY" -w '\n%{http_code}'`

func TestACurlSignedDeliveryIsAnsweredInTheTriggersSession(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Require(t, "webhook end-to-end test", tool+" is not installed", "apt-get install -y curl openssl")
		}
	}
	model, modelURL := startScripted(t)
	model.SetScript("triage", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "nightly-build", Steps: []scripted.Step{{Text: "The nightly build broke in the lint job."}}}}})
	p := startBinary(t, t.TempDir())
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	_, agent, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "triage", "model": "triage", "provider_id": prov["id"]})
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": "ci"})
	sid := sess["id"].(string)
	code, hook, raw := p.call(t, "POST", "/api/v1/triggers", map[string]any{"name": "ci failures", "kind": "webhook", "target": "agent",
		"agent_config_id": agent["id"], "session_id": sid, "brief": "A CI job failed: say which, in one line."})
	if code != 201 || hook["secret"] == nil || hook["hook_url"] != p.url+"/hooks/"+hook["id"].(string) {
		t.Fatalf("create: %d %s", code, raw)
	}

	cmd := exec.Command("bash", "-c", signAndPost)
	cmd.Env = append(cmd.Environ(), "HOOK_URL="+hook["hook_url"].(string), "SECRET="+hook["secret"].(string),
		`BODY={"pipeline":"nightly-build","job":"lint","status":"failed"}`)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || lines[len(lines)-1] != "201" {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	var fired httpapi.FireView
	if err := json.Unmarshal([]byte(strings.Join(lines[:len(lines)-1], "\n")), &fired); err != nil || fired.RunID == "" {
		t.Fatalf("delivery answer: %s", out)
	}

	// The agent's answer lands in the trigger's session, after the note
	// and the brief with the payload.
	var msgs []httpapi.EntryView
	waitFor(t, func() bool {
		_, _, raw := p.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
		json.Unmarshal(raw, &msgs)
		return strings.Contains(string(raw), "The nightly build broke in the lint job.")
	})
	if len(msgs) != 3 || msgs[0].Display == nil || msgs[0].Display.Kind != "trigger_fired" || msgs[1].Source != "user" ||
		!strings.Contains(string(msgs[1].Item), `\"pipeline\":\"nightly-build\"`) || msgs[2].RunID != fired.RunID {
		t.Fatalf("session after the delivery: %+v", msgs)
	}

	// A body changed after signing is refused.
	cmd = exec.Command("bash", "-c", strings.Replace(signAndPost, `--data "$BODY"`, `--data "$BODY "`, 1))
	cmd.Env = append(cmd.Environ(), "HOOK_URL="+hook["hook_url"].(string), "SECRET="+hook["secret"].(string), `BODY={}`)
	if out, _ := cmd.CombinedOutput(); !strings.HasSuffix(strings.TrimSpace(string(out)), "401") {
		t.Fatalf("a tampered body: %s", out)
	}
}

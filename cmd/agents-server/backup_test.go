package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// runCommand runs the binary's main with args and says what it printed.
func runCommand(args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestABackupTakenWhileARunStreamsRestoresWhole: a backup of a live SQLite
// store, taken while a run streams, restores into an empty data directory
// with every conversation, sealed credential and setting; a restore with
// the wrong key (or none) is refused and leaves the directory empty, and
// one over an existing store is refused.
func TestABackupTakenWhileARunStreamsRestoresWhole(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("slow", oneStep(scripted.Step{Text: strings.Repeat("slow ", 400), ChunkSize: 5, DelayMS: 10}))
	model.SetScript("quick", oneStep(scripted.Step{Text: "kept"}))
	cfg := testConfig(t)
	cfg.DatabaseURL = "" // a SQLite store, whichever store the suite runs on
	cfg.SecretKey = newKey(t)
	cfg.Token = "backup-test-admin-token-0123" // the restored store's admin signs in with it too
	h := startServer(t, cfg)
	tok := h.member("keeper")
	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	quick := h.createAgent(tok, map[string]any{"name": "quick", "model": "quick", "provider_id": prov.ID})
	slow := h.createAgent(tok, map[string]any{"name": "slow", "model": "slow", "provider_id": prov.ID})
	kept := h.createSession(tok, map[string]any{"agent_config_id": quick.ID, "name": "kept"})
	if v := h.chat(tok, kept.ID, "remember this"); v.Status != "completed" {
		t.Fatalf("chat = %+v", v)
	}
	h.call("PUT", "/api/v1/settings/max_runs_per_user", h.admin, map[string]string{"value": "7"}).want(t, 200)

	streaming := h.createSession(tok, map[string]any{"agent_config_id": slow.ID, "name": "streaming"})
	run := h.startRun(tok, streaming.ID, map[string]any{"input": "go"})
	sse := h.openSSE(tok, run, 0)
	for ev, _ := sse.next(t); ev.Type != domain.EventStep; ev, _ = sse.next(t) {
	}
	backup := filepath.Join(t.TempDir(), "agents.backup")
	if code, _, errOut := runCommand("backup", "--data-dir", cfg.DataDir, "--to", backup); code != 0 {
		t.Fatalf("backup exited %d: %s", code, errOut)
	}
	if code, _, errOut := runCommand("backup", "--data-dir", cfg.DataDir, "--to", backup); code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("a backup over an existing file: %d %s", code, errOut)
	}
	if last := sse.all(t); lastEvent(last).Type != domain.EventOutput {
		t.Fatalf("the run the backup was taken under ended with %s", lastEvent(last).Type)
	}

	// The wrong key, or none, is refused as a start is; nothing is left.
	empty := t.TempDir()
	keyFile := func(key string) string {
		f := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(f, []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	code, _, errOut := runCommand("restore", "--data-dir", empty, "--from", backup, "--secret-key-file", keyFile(newKey(t)))
	if code != 1 || !strings.Contains(errOut, "not the key this database was sealed with") {
		t.Errorf("restore with the wrong key: %d %s", code, errOut)
	}
	if code, _, errOut = runCommand("restore", "--data-dir", empty, "--from", backup); code != 1 || !strings.Contains(errOut, "no secret key is set") {
		t.Errorf("restore without a key: %d %s", code, errOut)
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("a refused restore left %v", left)
	}
	if code, _, errOut = runCommand("restore", "--data-dir", empty, "--from", filepath.Join(cfg.DataDir, "replica-id")); code != 1 {
		t.Errorf("restoring a file that is no backup: %d %s", code, errOut)
	}

	// With the key: everything is there on the restored store.
	right := keyFile(cfg.SecretKey)
	if code, _, errOut = runCommand("restore", "--data-dir", empty, "--from", backup, "--secret-key-file", right); code != 0 {
		t.Fatalf("restore exited %d: %s", code, errOut)
	}
	if code, _, errOut = runCommand("restore", "--data-dir", empty, "--from", backup, "--secret-key-file", right); code != 1 || !strings.Contains(errOut, "holds a store already") {
		t.Errorf("a restore over a store: %d %s", code, errOut)
	}
	h.stop()
	restored := cfg
	restored.DataDir = empty
	r := startServer(t, restored)
	again := r.login("keeper", "password-of-keeper")
	var msgs []httpapi.EntryView
	r.call("GET", "/api/v1/sessions/"+kept.ID+"/messages", again, nil).want(t, 200).decode(t, &msgs)
	if len(msgs) < 2 {
		t.Errorf("the kept conversation has %d entries", len(msgs))
	}
	r.call("GET", "/api/v1/sessions/"+streaming.ID, again, nil).want(t, 200)
	var settings []httpapi.SettingView
	r.call("GET", "/api/v1/settings", r.admin, nil).want(t, 200).decode(t, &settings)
	for _, s := range settings {
		if s.Key == "max_runs_per_user" && s.Value != "7" {
			t.Errorf("max_runs_per_user restored as %q", s.Value)
		}
	}
	// The sealed provider key opens under the restored store: a chat
	// reaches the provider with it.
	if v := r.chat(again, kept.ID, "still there?"); v.Status != "completed" {
		t.Errorf("a chat on the restored store: %+v", v)
	}
	calls := model.Requests()
	if got := calls[len(calls)-1].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("the restored provider sent %q", got)
	}
}

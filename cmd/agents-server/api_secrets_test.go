package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/workbench"
)

func newKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

func keyID(t *testing.T, key string) string {
	t.Helper()
	raw, err := secrets.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := secrets.NewBox(raw)
	return box.KeyID()
}

// filesContain reports which files under dir hold needle.
// filesContain lists the files under dir holding needle, and, when the
// server keeps dir's data on Postgres, the tables whose rows hold it.
func filesContain(t *testing.T, dir, needle string) []string {
	t.Helper()
	hits := tablesContain(t, dir, needle)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		if bytes.Contains(b, []byte(needle)) {
			hits = append(hits, filepath.Base(p))
		}
		return nil
	})
	return hits
}

func TestSecretSettingsAreMaskedAndSealedAtRest(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	key := newKey(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(key+"\n"), 0o600)
	cfg.SecretKeyFile = keyFile
	h := startServer(t, cfg)
	const plant = "planted-S3cret-9f1c"
	proxy := "http://bob:" + plant + "@proxy.internal:3128"
	put := func(v string) httpapi.SettingView {
		var s httpapi.SettingView
		h.call("PUT", "/api/v1/settings/proxy_url", h.admin, map[string]string{"value": v}).want(t, 200).decode(t, &s)
		return s
	}

	if s := put(proxy); s.Value != secrets.Mask || !s.Set || !s.Secret {
		t.Fatalf("write answered %+v", s)
	}
	for _, token := range []string{h.admin, h.member("sam")} {
		got := settingsByKey(t, h, token)["proxy_url"]
		if got.Value != secrets.Mask {
			t.Fatalf("read returned %q", got.Value)
		}
	}
	// The mask sent back keeps the stored value.
	put(secrets.Mask)
	ctx := context.Background()
	if v, _ := workbenchparts.Of(h.app.wb).Settings.String(ctx, settings.KeyProxyURL); v != proxy {
		t.Fatalf("after a masked write the backend reads %q", v)
	}

	// Neither the database nor its WAL holds the plaintext, live or closed.
	if hits := filesContain(t, cfg.DataDir, plant); len(hits) > 0 {
		t.Fatalf("plaintext secret found in %v", hits)
	}
	h.stop()
	if hits := filesContain(t, cfg.DataDir, plant); len(hits) > 0 {
		t.Fatalf("plaintext secret found in %v after close", hits)
	}

	// The same key opens it again after a restart.
	h2 := startServer(t, cfg)
	if v, _ := workbenchparts.Of(h2.app.wb).Settings.String(ctx, settings.KeyProxyURL); v != proxy {
		t.Fatalf("after restart the backend reads %q", v)
	}
	// Clearing removes it.
	h2.call("PUT", "/api/v1/settings/proxy_url", h2.admin, map[string]string{"value": ""}).want(t, 200)
	if v, _ := workbenchparts.Of(h2.app.wb).Settings.String(ctx, settings.KeyProxyURL); v != "" {
		t.Fatalf("cleared secret reads %q", v)
	}
}

func TestAWrongOrMissingKeyRefusesToStart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.SecretKey = newKey(t)
	h := startServer(t, cfg)
	h.stop()

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	wrong := cfg
	wrong.SecretKey = newKey(t)
	_, err := newApp(context.Background(), wrong, quiet)
	if err == nil {
		t.Fatal("started with the wrong key")
	}
	msg := workbench.Describe(err)
	if !strings.Contains(msg, keyID(t, cfg.SecretKey)) || !strings.Contains(msg, keyID(t, wrong.SecretKey)) {
		t.Fatalf("refusal does not name both key ids: %s", msg)
	}
	missing := cfg
	missing.SecretKey = ""
	_, err = newApp(context.Background(), missing, quiet)
	if err == nil || !strings.Contains(workbench.Describe(err), keyID(t, cfg.SecretKey)) {
		t.Fatalf("started without the key, or the refusal names no key id: %v", err)
	}
	malformed := cfg
	malformed.SecretKey = "too-short"
	if _, err = newApp(context.Background(), malformed, quiet); err == nil {
		t.Fatal("started with a malformed key")
	}
	// The right key still starts, and the log holds the first sealing and
	// the two refused starts, naming the keys by id only.
	h = startServer(t, cfg)
	recs := h.auditLog("&kind=secret_key")
	if len(recs) != 3 || recs[2].Action != "secret_key.seal" || recs[2].ObjectID != keyID(t, cfg.SecretKey) ||
		recs[2].ActorKind != "system" || recs[1].Action != "secret_key.check" || recs[1].Outcome != "failure" ||
		recs[1].ObjectID != keyID(t, wrong.SecretKey) || recs[0].ObjectID != "" {
		t.Fatalf("the secret key's records: %+v", recs)
	}
	noSecretIn(t, h, cfg.SecretKey, wrong.SecretKey)
}

func TestWithoutAKeySecretsArePlaintextAndStillMasked(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	h := startServer(t, cfg)
	h.call("PUT", "/api/v1/settings/proxy_url", h.admin, map[string]string{"value": "http://u:p@proxy:1"}).want(t, 200)
	if got := settingsByKey(t, h, h.admin)["proxy_url"]; got.Value != secrets.Mask {
		t.Fatalf("plaintext mode leaked %q", got.Value)
	}
	// Setting a key later keeps old rows readable until their next write.
	h.stop()
	cfg.SecretKey = newKey(t)
	h2 := startServer(t, cfg)
	if v, _ := workbenchparts.Of(h2.app.wb).Settings.String(context.Background(), settings.KeyProxyURL); v != "http://u:p@proxy:1" {
		t.Fatalf("pre-key row reads %q", v)
	}
}

package domain

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

// TestASandboxConfigIsCheckedFieldByField holds ParseSandboxConfig's
// refusals, each on its field, for both types.
func TestASandboxConfigIsCheckedFieldByField(t *testing.T) {
	manyHeaders := map[string]string{}
	for i := range MaxE2BHeaders + 1 {
		manyHeaders["X-H"+strings.Repeat("a", i+1)] = "v"
	}
	many, _ := json.Marshal(map[string]any{"template_id": "t", "headers": manyHeaders})
	for _, tc := range []struct {
		typ, raw, field, says string
	}{
		{SandboxDocker, `{}`, "config.image", "required"},
		{SandboxDocker, `{"image":"  "}`, "config.image", "required"},
		{SandboxDocker, `{"image":"x","host":"http://docker:2375"}`, "config.host", "must be empty (this machine)"},
		{SandboxDocker, `{"image":"x","host":"unix://"}`, "config.host", "needs a socket path"},
		{SandboxDocker, `{"image":"x","host":"tcp://"}`, "config.host", "tcp:// needs a host"},
		{SandboxDocker, `{"image":"x","host":"ssh://builder"}`, "config.host", "needs a user"},
		{SandboxDocker, `{"image":"x","host":"%zz"}`, "config.host", "not a URL"},
		{SandboxDocker, `{"image":"x","memory_mb":-1}`, "config.memory_mb", "between 0"},
		{SandboxDocker, `{"image":"x","memory_mb":1048577}`, "config.memory_mb", "between 0"},
		{SandboxDocker, `{"image":"x","cpus":256.5}`, "config.cpus", "between 0"},
		{SandboxDocker, `{"image":"x","max_read_file_bytes":-1}`, "config.max_read_file_bytes", "negative"},
		{SandboxDocker, `{"image":"x","user":"app user"}`, "config.user", "user[:group]"},
		{SandboxDocker, `{"image":"x","memory_mb":"lots"}`, "config.memory_mb", "must be int"},
		{SandboxDocker, `{"image":`, "config", "JSON object"},
		{SandboxDocker, `[1]`, "config", "JSON object"},
		{SandboxE2B, `"t"`, "config", "JSON object"},
		{SandboxE2B, `{}`, "config.template_id", "required"},
		{SandboxE2B, `{"template_id":"t","api_url":"ftp://e2b"}`, "config.api_url", "absolute http(s)"},
		{SandboxE2B, `{"template_id":"t","api_url":"/api"}`, "config.api_url", "absolute http(s)"},
		{SandboxE2B, `{"template_id":"t","data_plane_auth":"cookie"}`, "config.data_plane_auth", "access_token, api_key or none"},
		{SandboxE2B, `{"template_id":"t","timeout_seconds":86401}`, "config.timeout_seconds", "between 0"},
		{SandboxE2B, `{"template_id":"t","domain":"https://e2b.app"}`, "config.domain", "bare host name"},
		{SandboxE2B, `{"template_id":"t","max_read_file_bytes":-5}`, "config.max_read_file_bytes", "negative"},
		{SandboxE2B, `{"template_id":"t","headers":{"Bad Name":"v"}}`, "config.headers.Bad Name", "not a valid header name"},
		{SandboxE2B, `{"template_id":"t","headers":{"":"v"}}`, "config.headers.", "not a valid header name"},
		{SandboxE2B, `{"template_id":"t","headers":{"x-api-key":"v"}}`, "config.headers.x-api-key", "set by the server"},
		{SandboxE2B, `{"template_id":"t","headers":{"X-Team":"a","x-team":"b"}}`, "config.headers.x-team", "given twice (as X-Team"},
		{SandboxE2B, `{"template_id":"t","headers":{"X-Team":"a\r\nX-Evil: 1"}}`, "config.headers.X-Team", "one line"},
		{SandboxE2B, `{"template_id":"t","headers":{"X-Big":"` + strings.Repeat("v", 8<<10+1) + `"}}`, "config.headers.X-Big", "8 KiB"},
		{SandboxE2B, string(many), "config.headers", "at most 32 headers"},
		{SandboxE2B, `{"template_id":"t","allow_internet":"yes"}`, "config.allow_internet", "must be bool"},
		{"firecracker", `{}`, "type", "docker or e2b"},
	} {
		_, _, err := ParseSandboxConfig(tc.typ, json.RawMessage(tc.raw))
		if got, ok := errs.FieldsOf(err)[tc.field]; !ok || !strings.Contains(got, tc.says) {
			t.Errorf("%s %.60s: field %q says %q (%v), want %q", tc.typ, tc.raw, tc.field, got, err, tc.says)
		}
	}
}

// TestASandboxConfigIsReadCanonically holds what a valid config becomes:
// trimmed, unknown keys dropped, auto_pause on unless set, every header
// with a value to seal; an empty or null config is the empty object.
func TestASandboxConfigIsReadCanonically(t *testing.T) {
	d, e, err := ParseSandboxConfig(SandboxDocker, json.RawMessage(`{"image":" python:3.13 ","host":"ssh://ci@builder:22","user":"1000:1000","extra":1}`))
	if err != nil || e != nil || d.Image != "python:3.13" || d.Host != "ssh://ci@builder:22" || d.User != "1000:1000" {
		t.Fatalf("docker: %+v %+v %v", d, e, err)
	}
	for _, host := range []string{"", "unix:///var/run/docker.sock", "tcp://10.0.0.5:2375"} {
		raw, _ := json.Marshal(map[string]string{"image": "x", "host": host})
		if _, _, err := ParseSandboxConfig(SandboxDocker, raw); err != nil {
			t.Errorf("docker host %q: %v", host, err)
		}
	}

	_, e, err = ParseSandboxConfig(SandboxE2B, json.RawMessage(`{"template_id":"base","api_url":"https://api.e2b.app","data_plane_auth":"none","headers":{"X-Team":null,"X-Region":"eu"}}`))
	if err != nil || !*e.AutoPause || *e.Headers["X-Team"] != "" || *e.Headers["X-Region"] != "eu" {
		t.Fatalf("e2b: %+v, %v", e, err)
	}
	_, e, _ = ParseSandboxConfig(SandboxE2B, json.RawMessage(`{"template_id":"base","auto_pause":false}`))
	if *e.AutoPause || e.Headers == nil {
		t.Fatalf("an explicit auto_pause false, no headers: %+v", e)
	}
	for _, raw := range []string{"", "  ", "null"} {
		if _, _, err := ParseSandboxConfig(SandboxDocker, json.RawMessage(raw)); errs.FieldsOf(err)["config.image"] == "" {
			t.Errorf("config %q read as %v, want the empty object's refusal", raw, err)
		}
	}
	if names := SandboxTypeNames(); !slices.Equal(names, []string{SandboxDocker, SandboxE2B}) {
		t.Fatalf("types %v", names)
	}
}

func e2bSandbox(t *testing.T, raw string) Sandbox {
	t.Helper()
	_, e, err := ParseSandboxConfig(SandboxE2B, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return Sandbox{Type: SandboxE2B, E2B: e}
}

// TestASandboxsSecretsAreItsWriteOnlyFields holds Secrets: docker's ssh
// credentials, e2b's key and every header value, each a pointer into the
// config so sealing in place changes it; WithOwnConfig gives a copy whose
// secrets change nothing of the original.
func TestASandboxsSecretsAreItsWriteOnlyFields(t *testing.T) {
	docker := Sandbox{Type: SandboxDocker, Docker: &DockerConfig{Image: "x", SSHPassword: "pw", SSHKey: "key"}}
	sec := docker.Secrets()
	if len(sec) != 2 || *sec["ssh_password"] != "pw" || *sec["ssh_key"] != "key" {
		t.Fatalf("docker secrets %v", sec)
	}
	*sec["ssh_password"] = "sealed"
	if docker.Docker.SSHPassword != "sealed" {
		t.Fatal("a secret is not a pointer into the config")
	}

	e2b := e2bSandbox(t, `{"template_id":"base","api_key":"k","headers":{"X-Team":"team-secret"}}`)
	sec = e2b.Secrets()
	if len(sec) != 2 || *sec["api_key"] != "k" || *sec["headers.X-Team"] != "team-secret" {
		t.Fatalf("e2b secrets %v", sec)
	}
	own := e2b.WithOwnConfig()
	for _, v := range own.Secrets() {
		*v = "masked"
	}
	if e2b.E2B.APIKey != "k" || *e2b.E2B.Headers["X-Team"] != "team-secret" {
		t.Fatalf("masking a copy changed the original: %+v", e2b.E2B)
	}
	ownDocker := docker.WithOwnConfig()
	ownDocker.Docker.SSHKey = "other"
	if docker.Docker.SSHKey != "key" {
		t.Fatal("a docker copy shares its config")
	}
	if (&Sandbox{Type: "none"}).Secrets() != nil || (&Sandbox{}).Config() != nil {
		t.Fatal("a sandbox without a config has secrets or a config")
	}
	if docker.Config() != docker.Docker || e2b.Config() != e2b.E2B {
		t.Fatal("Config is not the type's config")
	}
}

// TestASandboxsDestinationIdentityAndContentSayWhatMayChange holds the
// three comparisons a sandbox edit is judged by: the destination (where
// the files live), the identity (what freezes while projects live there)
// and the content (what replaces containers) — and the read limit.
func TestASandboxsDestinationIdentityAndContentSayWhatMayChange(t *testing.T) {
	a := Sandbox{Type: SandboxDocker, Docker: &DockerConfig{Host: "tcp://h:2375", Image: "python:3", MemoryMB: 2048, CPUs: 1.5}}
	b := a.WithOwnConfig()
	b.Docker.Image, b.Name, b.Prompt, b.Docker.SSHPassword = "python:3.13", "renamed", "new prompt", "pw"
	if a.Destination() != b.Destination() || a.Identity() != b.Identity() || a.Content() == b.Content() {
		t.Fatalf("an image change: %q/%q, %q/%q", a.Identity(), b.Identity(), a.Content(), b.Content())
	}
	if a.Content() != "python:3||||2048|1.5" {
		t.Fatalf("docker content %q", a.Content())
	}
	b.Docker.Host = "ssh://me@other"
	if a.Destination() == b.Destination() {
		t.Fatal("another docker host is the same destination")
	}

	e := e2bSandbox(t, `{"template_id":"base","api_url":"https://api.e2b.app","domain":"e2b.app"}`)
	f := e.WithOwnConfig()
	f.E2B.APIKey, f.E2B.TimeoutSeconds = "other-key", 60
	if e.Identity() != f.Identity() || e.Content() != f.Content() || e.Content() != "base" {
		t.Fatalf("a key or lease change moved identity or content: %q %q", e.Identity(), f.Identity())
	}
	off := false
	f.E2B.AutoPause = &off
	if e.Destination() != f.Destination() || e.Identity() == f.Identity() {
		t.Fatal("auto_pause is not part of an e2b sandbox's identity")
	}
	if (Sandbox{Type: "x"}).Destination() != "x" || (Sandbox{}).Content() != "" {
		t.Fatal("a sandbox without config")
	}

	for _, tc := range []struct {
		s    Sandbox
		want int64
	}{
		{Sandbox{}, DefaultMaxReadFileBytes},
		{Sandbox{Docker: &DockerConfig{}}, DefaultMaxReadFileBytes},
		{Sandbox{Docker: &DockerConfig{MaxReadFileBytes: 1 << 20}}, 1 << 20},
		{Sandbox{E2B: &E2BConfig{MaxReadFileBytes: 4096}}, 4096},
	} {
		if got := tc.s.ReadLimit(); got != tc.want {
			t.Errorf("read limit %d, want %d", got, tc.want)
		}
	}
}

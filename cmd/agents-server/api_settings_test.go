package main

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/ports"
)

func settingsByKey(t *testing.T, h *harness, token string) map[string]httpapi.SettingView {
	t.Helper()
	var list []httpapi.SettingView
	h.call("GET", "/api/v1/settings", token, nil).want(t, 200).decode(t, &list)
	out := map[string]httpapi.SettingView{}
	for _, s := range list {
		out[s.Key] = s
	}
	return out
}

func TestSettingDefsComeFromTheRegistry(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("mia")

	var defs []httpapi.SettingDefView
	h.call("GET", "/api/v1/setting-defs", member, nil).want(t, 200).decode(t, &defs)
	if len(defs) != len(settings.Registry) {
		t.Fatalf("%d defs served, registry has %d", len(defs), len(settings.Registry))
	}
	want := map[string]string{
		"proxy_url": "", "system_prompt": "", "trace_retention_days": "30", "trace_include_sensitive_data": "true",
		"trace_span_data_kb": "1024", "log_sensitive_data": "false", "approval_ttl_minutes": "1440",
		"max_terminals_per_sandbox": "4", "sandbox_idle_minutes": "30", "max_tasks_per_session": "6",
		"max_streams_per_user": "100", "mcp_server_enabled": "true", "title_model": "",
		"skills_github_api_url": "https://api.github.com", "mcp_result_max_kb": "1024", "mcp_stdio_members_on_host": "false",
		"outbound_allow_private": "false", "outbound_allowed_hosts": "",
		"max_queued_tasks_per_session": "20", "max_mcp_servers_per_user": "20",
		"max_runs_per_user": "10", "max_mcp_sessions_per_user": "20", "audit_retention_days": "365",
		"oidc_link_verified_email": "false", "budgets_apply_to_admins": "false",
	}
	for _, d := range defs {
		def, ok := want[d.Key]
		if !ok {
			t.Errorf("unexpected key %s", d.Key)
			continue
		}
		if d.Default != def || d.Group == "" || d.Label == "" {
			t.Errorf("%s: %+v", d.Key, d)
		}
		if d.Kind == "int" && (d.Min == nil || d.Max == nil) {
			t.Errorf("%s: int without bounds", d.Key)
		}
		delete(want, d.Key)
	}
	if len(want) > 0 {
		t.Fatalf("keys missing: %v", want)
	}
	// Everyone reads the effective values.
	got := settingsByKey(t, h, member)
	if got["max_terminals_per_sandbox"].Value != "4" || got["max_terminals_per_sandbox"].Set {
		t.Fatalf("default not reported: %+v", got["max_terminals_per_sandbox"])
	}
}

func TestSettingWritesAreTypedAndAdminOnly(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("max")
	put := func(key, value, token string) reply {
		return h.call("PUT", "/api/v1/settings/"+key, token, map[string]string{"value": value})
	}

	put("max_terminals_per_sandbox", "8", member).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/settings/max_terminals_per_sandbox", member, nil).wantErr(t, 403, "forbidden")

	cases := []struct{ key, value string }{
		{"no_such_key", "1"},
		{"max_terminals_per_sandbox", "abc"},
		{"max_terminals_per_sandbox", "33"}, // max 32
		{"max_terminals_per_sandbox", "0"},  // min 1
		{"max_terminals_per_sandbox", "1.5"},
		{"trace_include_sensitive_data", "maybe"},
		{"proxy_url", "not a url"},
		{"proxy_url", "ftp://proxy:21"},
	}
	for _, c := range cases {
		d := put(c.key, c.value, h.admin).wantErr(t, 400, "validation")
		if c.key != "no_such_key" && d.Fields["value"] == "" {
			t.Errorf("%s=%q: error does not name the value: %+v", c.key, c.value, d)
		}
	}
	// Refused writes changed nothing.
	if got := settingsByKey(t, h, h.admin); got["max_terminals_per_sandbox"].Set || got["proxy_url"].Set {
		t.Fatalf("a refused write was stored: %+v", got)
	}
	if _, ok := settingsByKey(t, h, h.admin)["no_such_key"]; ok {
		t.Fatal("an undefined key was stored")
	}

	var s httpapi.SettingView
	put("max_terminals_per_sandbox", " 8 ", h.admin).want(t, 200).decode(t, &s)
	if s.Value != "8" || !s.Set {
		t.Fatalf("normalized write = %+v", s)
	}
	put("trace_include_sensitive_data", "FALSE", h.admin).want(t, 200).decode(t, &s)
	if s.Value != "false" {
		t.Fatalf("bool write = %+v", s)
	}
	ctx := context.Background()
	if n, _ := workbenchparts.Of(h.app.wb).Settings.Int(ctx, settings.KeyMaxTerminalsPerSandbox); n != 8 {
		t.Fatalf("backend reads %d", n)
	}
	// An empty value resets to the default.
	put("max_terminals_per_sandbox", "", h.admin).want(t, 200).decode(t, &s)
	if s.Value != "4" || s.Set {
		t.Fatalf("reset = %+v", s)
	}
	// DELETE resets too, and is idempotent for a defined key.
	h.call("DELETE", "/api/v1/settings/trace_include_sensitive_data", h.admin, nil).want(t, 204)
	h.call("DELETE", "/api/v1/settings/trace_include_sensitive_data", h.admin, nil).want(t, 204)
	if b, _ := workbenchparts.Of(h.app.wb).Settings.Bool(ctx, settings.KeyTraceIncludeSensitiveData); !b {
		t.Fatal("delete did not restore the default")
	}
	h.call("DELETE", "/api/v1/settings/never_defined", h.admin, nil).wantErr(t, 404, "not_found")
}

func TestUnknownLeftoverSettingsAreListedMaskedAndDeletable(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	// A value an older build left behind.
	if err := workbenchparts.Of(h.app.wb).DB.PutSetting(context.Background(), ports.StoredSetting{Key: "retired_knob", Value: "old-value", UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got := settingsByKey(t, h, h.admin)["retired_knob"]
	if !got.Unknown || got.Value != "********" {
		t.Fatalf("leftover = %+v", got)
	}
	h.call("PUT", "/api/v1/settings/retired_knob", h.admin, map[string]string{"value": "x"}).wantErr(t, 400, "validation")
	h.call("DELETE", "/api/v1/settings/retired_knob", h.admin, nil).want(t, 204)
	if _, ok := settingsByKey(t, h, h.admin)["retired_knob"]; ok {
		t.Fatal("leftover still listed after delete")
	}
	h.call("DELETE", "/api/v1/settings/retired_knob", h.admin, nil).wantErr(t, 404, "not_found")
}

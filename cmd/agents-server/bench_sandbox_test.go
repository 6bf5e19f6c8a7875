package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/ports"
)

// BenchmarkSandboxExec measures the floor of one exec_command round trip:
// a command in a running project container through the lease the runner
// holds (docker exec create, attach, start, wait, inspect), against the
// private daemon.
//
//	go test -run '^$' -bench SandboxExec ./cmd/agents-server
func BenchmarkSandboxExec(b *testing.B) {
	needDocker(b)
	dir := b.TempDir()
	cfg := config{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(b, dir), LogLevel: "error", LogFormat: "text",
		HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits}, PasswordParams: fastPasswords, DrainTimeout: time.Second}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer a.shutdown()
	go a.serve()
	ctx := context.Background()
	admin := domain.Principal{User: domain.User{ID: "bench-admin", Role: domain.RoleAdmin}}
	users, err := workbenchparts.Of(a.wb).DB.ListUsers(ctx)
	if err != nil || len(users) == 0 {
		b.Fatalf("users: %v", err)
	}
	admin.User = users[0]
	sb, err := workbenchparts.Of(a.wb).Sandboxes.CreateSandbox(ctx, admin, sandboxes.SandboxInput{Name: "bench", Type: "docker",
		Config: []byte(`{"image":"` + sandboxImage + `","memory_mb":256}`)})
	if err != nil {
		b.Fatal(err)
	}
	p, err := workbenchparts.Of(a.wb).Sandboxes.CreateProject(ctx, admin, sandboxes.ProjectInput{Name: "bench", SandboxID: sb.ID})
	if err != nil {
		b.Fatal(err)
	}
	defer workbenchparts.Of(a.wb).Sandboxes.DeleteProject(ctx, admin, p.ID)
	lease, err := workbenchparts.Of(a.wb).Sandboxes.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Release()
	for _, size := range []int{0, 1 << 20} {
		b.Run(map[int]string{0: "true", 1 << 20: "1MiB-output"}[size], func(b *testing.B) {
			cmd := "true"
			if size > 0 {
				cmd = "head -c 1048576 /dev/zero"
			}
			for b.Loop() {
				var out bytes.Buffer
				code, err := lease.Exec(ctx, ports.ExecRequest{Cmd: []string{"sh", "-c", cmd}, Stdout: &out, Stderr: io.Discard})
				if err != nil || code != 0 || out.Len() != size {
					b.Fatalf("exec: %d %v (%d bytes) %s", code, err, out.Len(), strings.TrimSpace(out.String()[:min(out.Len(), 80)]))
				}
			}
		})
	}
}

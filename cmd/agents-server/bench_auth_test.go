package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// BenchmarkAuthenticate measures what verifying a bearer token costs, with
// the verified-token cache off (every request reads the token and its user
// from SQLite) and on: the call alone, the call from every CPU at once, and
// a whole authenticated request (GET /auth/me over loopback HTTP).
//
//	go test -run '^$' -bench Authenticate -benchmem ./cmd/agents-server
func BenchmarkAuthenticate(b *testing.B) {
	// A benchmark's request rate is far past any client's.
	unlimited := httpapi.Budget{PerSecond: 1e9, Burst: 1e9}
	limits := httpapi.RateLimits{Read: unlimited, Write: unlimited, AuthFail: unlimited}
	dir := b.TempDir()
	cfg := config{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(b, dir), LogLevel: "error", LogFormat: "text",
		HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: limits}, PasswordParams: fastPasswords, DrainTimeout: time.Second}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	go a.serve()
	defer a.shutdown()
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		ttl  time.Duration
	}{{"store", 0}, {"cached", auth.DefaultTokenCacheTTL}} {
		workbenchparts.Of(a.wb).Auth.SetTokenCache(mode.ttl, auth.DefaultTokenCacheSize)
		b.Run("call/"+mode.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := workbenchparts.Of(a.wb).Auth.Authenticate(ctx, a.wb.AdminToken()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("parallel/"+mode.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := workbenchparts.Of(a.wb).Auth.Authenticate(ctx, a.wb.AdminToken()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("request/"+mode.name, func(b *testing.B) {
			req, _ := http.NewRequest("GET", a.URL()+"/api/v1/auth/me", nil)
			req.Header.Set("Authorization", "Bearer "+a.wb.AdminToken())
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

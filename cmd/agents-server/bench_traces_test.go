package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// BenchmarkTraceSummary opens the trace listing (?summary=true) of a session
// holding 200 generation spans of 1 MB each and of one holding 200 spans of
// 1 KB: the two figures should match, because a summary reads no payload.
//
//	go test -run '^$' -bench TraceSummary ./cmd/agents-server
func BenchmarkTraceSummary(b *testing.B) {
	dir := b.TempDir()
	cfg := config{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(b, dir), LogLevel: "error", LogFormat: "text",
		HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits}, PasswordParams: fastPasswords, DrainTimeout: time.Second}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	go a.serve()
	defer a.shutdown()
	me, _ := workbenchparts.Of(a.wb).DB.FindBootstrapUser(context.Background())
	for _, size := range []int{1 << 10, 1 << 20} {
		sess, err := workbenchparts.Of(a.wb).Sessions.Create(context.Background(), domain.Principal{User: me}, fmt.Sprint("size ", size), "")
		if err != nil {
			b.Fatal(err)
		}
		payload, _ := json.Marshal(map[string]string{"input": strings.Repeat("x", size)})
		for i := 0; i < 200; i++ {
			now := time.Now()
			sp := domain.Span{ID: fmt.Sprintf("%d-%03d", size, i), SessionID: sess.ID, RunID: "run", Kind: domain.SpanGeneration,
				Name: "gpt", StartedAt: now, EndedAt: now, Meta: map[string]any{"model": "gpt"}, Data: payload}
			if err := workbenchparts.Of(a.wb).DB.SaveSpan(context.Background(), sp); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("payload-%dKB", size>>10), func(b *testing.B) {
			req, _ := http.NewRequest("GET", a.URL()+"/api/v1/sessions/"+sess.ID+"/traces?summary=true", nil)
			req.Header.Set("Authorization", "Bearer "+a.wb.AdminToken())
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err, resp.StatusCode)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

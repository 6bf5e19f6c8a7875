package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// trickle declares a 100-byte body on path and sends it a byte every 50 ms
// (5 s in all); it returns how many body bytes were sent when the server
// closed the connection, and what the server answered, if anything.
func trickle(t *testing.T, base, method, path string) (sent int64, status string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", method, path)
	var n atomic.Int64
	go func() {
		for range 100 {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			n.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	// A generous bound: the whole body would take 5 s; a server that never
	// gives up is a failure, not a hang.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	rd := bufio.NewReader(conn)
	line, _ := rd.ReadString('\n')
	_, err = io.Copy(io.Discard, rd) // to the close
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%s %s: the connection was still open after 30 s (%d body bytes sent)", method, path, n.Load())
	}
	return n.Load(), strings.TrimSpace(line)
}

// A client that declares a body and trickles it loses its connection when
// the body read time passes, on any path, with or without a token; event
// streams, WebSockets and a Prefer: wait request outlive that time.
func TestSlowRequestBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("slow", oneStep(scripted.Step{Text: strings.Repeat("slowly ", 12), ChunkSize: 7, DelayMS: 100}))
	cfg := testConfig(t)
	cfg.HTTP.BodyReadTimeout = 300 * time.Millisecond
	h := startServer(t, cfg)

	for _, target := range [][2]string{
		{"POST", "/api/v1/auth/login"}, {"POST", "/api/v1/sessions"}, {"PUT", "/api/v1/nowhere"},
		{"POST", "/ws"}, {"POST", "/ws/terminal"}, {"GET", "/"}, {"GET", "/api/v1/auth/me"},
	} {
		sent, status := trickle(t, h.base, target[0], target[1])
		if sent >= 100 {
			t.Errorf("%s %s: the server read the whole trickled body (answered %q)", target[0], target[1], status)
		}
	}

	// Long-lived requests without a body, and a request whose body came at
	// once, are not cut by it.
	tok := h.member("slowpoke")
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "slow", "model": "slow"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	ws := h.dialWS(tok)
	r := h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "go"}, "Prefer", "wait=60").want(t, http.StatusOK)
	if !strings.Contains(string(r.Body), "slowly") {
		t.Fatalf("the waited run answered %s", r.Body)
	}
	run := h.startRun(tok, s.ID, map[string]any{"input": "again"})
	stream := h.openSSE(tok, run, 0)
	if last := finalOf(t, stream); last.Type != domain.EventOutput {
		t.Fatalf("the stream ended with %s", last.Type)
	}
	for ev := ws.read(); ev.Type != domain.EventOutput; ev = ws.read() {
	}
}

package sandboxtools

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHeadTailKeepsBothEndsWithinTheCap(t *testing.T) {
	h := newHeadTail(100)
	for i := 0; i < 1000; i++ {
		h.Write([]byte("0123456789"))
	}
	h.Write([]byte("THE-END"))
	out := h.String()
	if !strings.HasPrefix(out, strings.Repeat("0123456789", 5)) || !strings.HasSuffix(out, "THE-END") {
		t.Fatalf("head or tail lost: %q", out)
	}
	if !strings.Contains(out, "[9907 bytes omitted]") {
		t.Fatalf("gap not reported: %q", out)
	}
	small := newHeadTail(100)
	small.Write([]byte("short"))
	if small.String() != "short" {
		t.Fatalf("short output changed: %q", small.String())
	}
}

func TestProgressCoalescesAndFlushesOnClose(t *testing.T) {
	var mu sync.Mutex
	var got []string
	p := newProgress(func(d string) { mu.Lock(); got = append(got, d); mu.Unlock() })
	for i := 0; i < 50; i++ {
		p.Write([]byte("x"))
	}
	p.Close()
	p.Write([]byte("after close"))
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "") != strings.Repeat("x", 50) || len(got) > 2 {
		t.Fatalf("deltas = %q", got)
	}
}

func TestMarkedStreamSplitsAtMarkersAcrossChunks(t *testing.T) {
	m := newMarkedStream("__mark")
	var first, second bytes.Buffer
	m.attach(&first)
	next := make(chan struct{})
	go func() {
		// The marker arrives cut in pieces, after output without a newline;
		// the second command's output comes once it was sent.
		for _, chunk := range []string{"hello", "\n__ma", "rk 3", "\n"} {
			m.Write([]byte(chunk))
			time.Sleep(time.Millisecond)
		}
		<-next
		for _, chunk := range []string{"world\n", "\n", "__mark 0\n"} {
			m.Write([]byte(chunk))
		}
	}()
	line, ok := m.wait(context.Background())
	if !ok || line != "3" || first.String() != "hello" {
		t.Fatalf("first command: %q %v output %q", line, ok, first.String())
	}
	m.attach(&second)
	close(next)
	line, ok = m.wait(context.Background())
	if !ok || line != "0" || second.String() != "world\n" {
		t.Fatalf("second command: %q %v output %q", line, ok, second.String())
	}
	m.finish()
	if _, ok := m.wait(context.Background()); ok {
		t.Fatal("an ended stream reported a marker")
	}
}

func TestShellQuote(t *testing.T) {
	if got := shellQuote("it's a dir"); got != `'it'\''s a dir'` {
		t.Fatalf("quote = %s", got)
	}
	var _ io.Writer = (*headTail)(nil)
}

package sandboxtools

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// Caps on what the model is shown of a tool's output.
const (
	execStreamCap = 32 << 10 // per stream of a command, head and tail kept
	fileShowCap   = 64 << 10 // of a file read
)

// headTail keeps the first and last halves of a stream up to its cap and
// counts what it dropped between them: a command that prints a gigabyte
// costs the server at most the cap.
type headTail struct {
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

func newHeadTail(max int) *headTail { return &headTail{max: max} }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	half := h.max / 2
	if room := half - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - (h.max - half); over > 0 {
		h.dropped += int64(over)
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

// String is the kept text, marking the gap when something was dropped.
func (h *headTail) String() string {
	if h.dropped == 0 {
		return validUTF8(string(h.head) + string(h.tail))
	}
	return validUTF8(string(h.head)) + fmt.Sprintf("\n… [%d bytes omitted] …\n", h.dropped) + validUTF8(string(h.tail))
}

// validUTF8 drops the broken rune a cut may leave at either end.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r != utf8.RuneError {
			out = append(out, r)
		}
	}
	return string(out)
}

// progressCap bounds how much live output one call streams to clients; the
// result still carries its capped streams.
const progressCap = 1 << 20

// progress streams a running tool's output as run.tool_progress events,
// coalesced: at most one event per interval, or sooner when a chunk fills.
type progress struct {
	mu      sync.Mutex
	emit    func(delta string)
	buf     []byte
	sent    int
	timer   *time.Timer
	stopped bool
}

const (
	progressInterval = 100 * time.Millisecond
	progressChunk    = 16 << 10
)

func newProgress(emit func(string)) *progress { return &progress{emit: emit} }

func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.sent >= progressCap {
		return len(b), nil
	}
	p.buf = append(p.buf, b...)
	if len(p.buf) >= progressChunk {
		p.flushLocked()
	} else if p.timer == nil {
		p.timer = time.AfterFunc(progressInterval, p.Flush)
	}
	return len(b), nil
}

// Flush sends what is buffered.
func (p *progress) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
}

func (p *progress) flushLocked() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if len(p.buf) == 0 || p.stopped {
		return
	}
	// Hold back a rune cut in half by the chunking.
	cut := len(p.buf)
	for cut > 0 && cut > len(p.buf)-utf8.UTFMax && !utf8.Valid(p.buf[:cut]) {
		cut--
	}
	if cut == 0 {
		cut = len(p.buf)
	}
	chunk := string(p.buf[:cut])
	p.buf = append(p.buf[:0], p.buf[cut:]...)
	p.sent += len(chunk)
	if p.sent >= progressCap {
		chunk += "\n… [live output stops here; the result carries the rest, capped] …\n"
	}
	p.emit(chunk)
}

// Close flushes and stops streaming.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.stopped = true
}

package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/agents-server/agents-server/core/domain"
)

// errTooLarge ends the reading of an answer past MaxMessageBytes.
var errTooLarge = fmt.Errorf("the MCP server sent a message larger than %d MB, which the workbench does not read", MaxMessageBytes>>20)

// maxMessage is MaxMessageBytes; tests lower it.
var maxMessage = MaxMessageBytes

// wireNotes are what one connection's requests met that the SDK reports
// only as text (it flattens the errors of its transport): the calls and the
// dial read them to say why they failed.
type wireNotes struct {
	cut     atomic.Int64                           // answers cut at the bound
	refused atomic.Pointer[domain.OutboundRefusal] // the last dial the outbound policy refused
}

// boundedTransport bounds every answer's messages: a JSON answer as a
// whole, an event stream event by event (a stream may live for hours; one
// event of it may not be larger than a JSON answer).
type boundedTransport struct {
	base  http.RoundTripper
	notes *wireNotes
}

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	var refused *domain.OutboundRefusal
	if errors.As(err, &refused) {
		t.notes.refused.Store(refused)
	}
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &boundedBody{ReadCloser: resp.Body, events: mt == "text/event-stream", max: maxMessage, cut: &t.notes.cut}
	return resp, nil
}

// boundedBody fails a read once a message passes max bytes. In an event
// stream a message ends at a blank line.
type boundedBody struct {
	io.ReadCloser
	events bool
	max    int
	n      int  // bytes of the current message
	nl     bool // the previous byte ended a line (an event ends at a blank line)
	cut    *atomic.Int64
}

func (b *boundedBody) tooLarge() (int, error) {
	b.cut.Add(1)
	return 0, errTooLarge
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.events {
		b.n += n
		if b.n > b.max {
			return b.tooLarge()
		}
		return n, err
	}
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.n += len(chunk)
			if len(chunk) > 1 || chunk[0] != '\r' {
				b.nl = false
			}
			break
		}
		line := chunk[:i]
		if b.nl && (len(line) == 0 || len(line) == 1 && line[0] == '\r') {
			b.n = 0 // a blank line: the event ended
		} else {
			b.n += i + 1
		}
		b.nl = true
		chunk = chunk[i+1:]
	}
	if b.n > b.max {
		return b.tooLarge()
	}
	return n, err
}

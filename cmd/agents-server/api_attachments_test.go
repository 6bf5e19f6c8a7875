package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/workbench"
)

// pngOf is a real w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload posts a file as multipart/form-data in the part named part.
func (h *harness) upload(token, part, name string, data []byte) reply {
	h.t.Helper()
	req, body := h.uploadRequest(token, part, name, data)
	return h.send(req, body)
}

// uploadRequest is upload's request and its body, for a goroutine to send.
func (h *harness) uploadRequest(token, part, name string, data []byte) (*http.Request, []byte) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile(part, name)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", h.base+"/api/v1/attachments", bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	return req, body.Bytes()
}

// streamedPNG is a genuine w×h 8-bit RGB PNG of black, written row by row:
// a 7000×7000 one is about 180 KB, made without holding its pixels.
func streamedPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		out.WriteString(typ)
		out.Write(data)
		out.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(append([]byte(typ), data...))))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0)) // 8-bit RGB, not interlaced
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+3*w) // filter byte, then the samples
	for range h {
		zw.Write(row)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

func (h *harness) uploadPNG(token string, w, ht int) httpapi.AttachmentView {
	h.t.Helper()
	var a httpapi.AttachmentView
	h.upload(token, "file", fmt.Sprintf("shot-%dx%d.png", w, ht), pngOf(h.t, w, ht)).want(h.t, 201).decode(h.t, &a)
	return a
}

func TestAttachmentUploadAndRead(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	tok := h.member("uploader")
	img := pngOf(t, 2, 3)
	var a httpapi.AttachmentView
	h.upload(tok, "file", `C:\shots\screen.png`, img).want(t, 201).decode(t, &a)
	if a.ID == "" || a.Mime != "image/png" || a.Width != 2 || a.Height != 3 || a.Size != int64(len(img)) || a.Name != "screen.png" {
		t.Fatalf("uploaded = %+v", a)
	}
	got := h.call("GET", "/api/v1/attachments/"+a.ID, tok, nil).want(t, 200)
	if !bytes.Equal(got.Body, img) || got.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("read back %d bytes as %q", len(got.Body), got.Header.Get("Content-Type"))
	}
	// A large screenshot is kept at the size vision models use.
	var wide httpapi.AttachmentView
	h.upload(tok, "file", "wide.png", pngOf(t, 2000, 1000)).want(t, 201).decode(t, &wide)
	if wide.Width != 1568 || wide.Height != 784 || wide.Mime != "image/png" {
		t.Fatalf("scaled = %+v", wide)
	}
	// Someone else's reads as absent.
	h.call("GET", "/api/v1/attachments/"+a.ID, h.member("stranger"), nil).wantErr(t, 404, "not_found")

	// What is not a PNG or JPEG is refused by its bytes, whatever its name.
	e := h.upload(tok, "file", "fake.png", []byte("just text, honestly")).wantErr(t, 400, "validation")
	if e.Fields["file"] == "" {
		t.Fatalf("refusal names no field: %+v", e)
	}
	h.upload(tok, "image", "x.png", img).wantErr(t, 400, "validation")    // the wrong part
	h.upload(tok, "file", "empty.png", nil).wantErr(t, 400, "validation") // nothing
	big := append(bytes.Clone(img), make([]byte, domain.MaxAttachmentBytes)...)
	h.upload(tok, "file", "big.png", big).wantErr(t, 413, "validation")
	// Not multipart at all.
	h.call("POST", "/api/v1/attachments", tok, map[string]any{"file": "x"}).wantErr(t, 400, "validation")
}

func TestAnImageReachesTheModelInEachVendorsFormat(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	_, url := startScripted(t)
	tok := h.member("looker")
	via := map[string]string{"openai-responses": "input_image", "openai-chat": "image_url", "anthropic": "image block"}
	for protocol, body := range protocols(url) {
		t.Run(protocol, func(t *testing.T) {
			agent := h.agentOn(tok, body, map[string]any{"name": "vision-" + protocol, "model": "vision"})
			s := h.createSession(tok, map[string]any{"agent_config_id": agent})
			a, b := h.uploadPNG(tok, 2, 3), h.uploadPNG(tok, 4, 1)
			var v httpapi.RunStateView
			h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok,
				map[string]any{"input": "what is this?", "attachment_ids": []string{a.ID, b.ID}}, "Prefer", "wait=30").want(t, 200).decode(t, &v)
			want := "[images: image/png 2x3, image/png 4x1 via " + via[protocol] + "]"
			if v.Status != "completed" || v.FinalOutput == nil || !strings.Contains(*v.FinalOutput, want) ||
				!strings.Contains(*v.FinalOutput, "You said: what is this?") {
				t.Fatalf("answer = %+v (want %q)", v, want)
			}
			// The stored message refers to the images; it does not hold them.
			var parts []domain.ContentPart
			for _, e := range h.messages(tok, s.ID, "") {
				if e.Source == domain.SourceUser {
					parts = domain.ParseItem(e.Item).Parts()
				}
				if bytes.Contains(e.Item, []byte("base64")) {
					t.Fatalf("an entry holds image bytes: %s", e.Item)
				}
			}
			if len(parts) != 3 || parts[0].Text != "what is this?" || parts[1].AttachmentID != a.ID || parts[2].AttachmentID != b.ID ||
				parts[1].Width != 2 || parts[1].Height != 3 || parts[1].Mime != "image/png" {
				t.Fatalf("stored parts = %+v", parts)
			}
			// Nor does the trace: the generation span keeps the reference.
			for _, sp := range h.traces(tok, s.ID, "") {
				raw, _ := json.Marshal(sp)
				if bytes.Contains(raw, []byte(";base64,")) {
					t.Fatalf("a span holds image bytes: %.300s", raw)
				}
			}
			// The next turn still shows the model the images it was sent.
			h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "and now?"}, "Prefer", "wait=30").
				want(t, 200).decode(t, &v)
			if v.FinalOutput == nil || *v.FinalOutput != "You said: and now?" {
				t.Fatalf("second answer = %+v", v)
			}
		})
	}
}

func TestImagesOnARunAreCheckedAndRefusalsSaidPlainly(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	model.SetScript("blind", scripted.Script{RefuseImages: true, Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "fine"}}}}})
	tok := h.member("sender")
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "blind", "model": "blind"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	runs := "/api/v1/sessions/" + s.ID + "/runs"

	// An image alone is a message.
	mine := h.uploadPNG(tok, 1, 1)
	var v httpapi.RunStateView
	h.call("POST", runs, tok, map[string]any{"attachment_ids": []string{mine.ID}}, "Prefer", "wait=30").want(t, 200).decode(t, &v)
	if v.Status != "error" || v.Error == nil || !strings.Contains(v.Error.Message, "does not accept image input") ||
		!strings.Contains(v.Error.Message, "refused a request carrying images") {
		t.Fatalf("refused image = %+v", v)
	}
	// Someone else's image, an unknown id, a repeat, and too many are refused
	// before anything is stored.
	before := len(h.messages(tok, s.ID, ""))
	theirs := h.uploadPNG(h.member("other"), 1, 1)
	for _, ids := range [][]string{{theirs.ID}, {"no-such-id"}, {mine.ID, mine.ID}, make([]string, domain.MaxAttachmentsPerMessage+1)} {
		e := h.call("POST", runs, tok, map[string]any{"input": "x", "attachment_ids": ids}).wantErr(t, 400, "validation")
		if e.Fields["attachment_ids"] == "" {
			t.Fatalf("%v: refusal names no field: %+v", ids, e)
		}
	}
	if after := len(h.messages(tok, s.ID, "")); after != before {
		t.Fatalf("refused runs stored entries: %d → %d", before, after)
	}
	// Without images the same model answers.
	h.call("POST", runs, tok, map[string]any{"input": "plain words"}, "Prefer", "wait=30").want(t, 200).decode(t, &v)
	if v.Status != "completed" {
		t.Fatalf("plain run = %+v", v)
	}
}

// An image whose header declares more pixels than one decode may take is
// refused, naming the limit, before a byte of it is decoded: a 7000×7000
// PNG of 180 KB, under the old 50-megapixel cap, was decoded (about 550 MB)
// and stored.
func TestAnImageTooLargeToDecodeIsRefusedUndecoded(t *testing.T) {
	t.Parallel()
	var decoded atomic.Int32
	cfg := testConfig(t)
	cfg.Images.Decoding = func() { decoded.Add(1) }
	h := startServer(t, cfg)
	tok := h.member("bomber")
	e := h.upload(tok, "file", "huge.png", streamedPNG(t, 7000, 7000)).wantErr(t, 413, "validation")
	if !strings.Contains(e.Fields["file"], "7000×7000") || !strings.Contains(e.Fields["file"], "192 MiB") {
		t.Fatalf("refusal = %+v", e)
	}
	if n := decoded.Load(); n != 0 {
		t.Fatalf("the refused image was decoded %d times", n)
	}
	// A large image within the budget is decoded and scaled as before.
	var a httpapi.AttachmentView
	h.upload(tok, "file", "wide.png", streamedPNG(t, 4000, 2000)).want(t, 201).decode(t, &a)
	if a.Width != 1568 || a.Height != 784 || decoded.Load() != 1 {
		t.Fatalf("scaled = %+v after %d decodes", a, decoded.Load())
	}
}

// Uploads sent together decode no more at once than there are decoders;
// the others wait their turn and are stored.
func TestUploadsDecodeNoMoreAtOnceThanTheDecoders(t *testing.T) {
	t.Parallel()
	var inside, peak, waiting atomic.Int32
	turn := make(chan struct{})
	cfg := testConfig(t)
	cfg.Images = workbench.ImageOptions{Decoders: 2, DecodeWait: time.Minute, Decoding: func() {
		n := inside.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-turn // each decode waits for the test to let it through
		inside.Add(-1)
	}, Waiting: func() { waiting.Add(1) }}
	h := startServer(t, cfg)
	tok := h.member("crowd")
	const uploads = 6
	statuses := make(chan int, uploads)
	for i := range uploads {
		req, _ := h.uploadRequest(tok, "file", fmt.Sprintf("wide-%d.png", i), pngOf(t, 1600, 20))
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	// Two decode; the four others found both decoders taken and wait.
	waitFor(t, func() bool { return inside.Load() == 2 && waiting.Load() == uploads-2 })
	for range uploads {
		turn <- struct{}{} // lets exactly one decode go on
	}
	for range uploads {
		if st := <-statuses; st != 201 {
			t.Fatalf("an upload answered %d", st)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("%d images were decoded at once, with 2 decoders", p)
	}
}

// An upload that finds no decoder free within the wait is refused 503,
// with Retry-After, and nothing is stored.
func TestAnUploadNoDecoderTakesInTimeIsUnavailable(t *testing.T) {
	t.Parallel()
	var held atomic.Bool
	busy, done := make(chan struct{}, 1), make(chan struct{})
	cfg := testConfig(t)
	cfg.Images = workbench.ImageOptions{Decoders: 1, DecodeWait: 50 * time.Millisecond, Decoding: func() {
		if held.CompareAndSwap(false, true) { // the first decode holds the decoder until released
			busy <- struct{}{}
			<-done
		}
	}}
	h := startServer(t, cfg)
	tok := h.member("latecomer")
	first := make(chan int, 1)
	req, _ := h.uploadRequest(tok, "file", "first.png", pngOf(t, 1600, 20))
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-busy
	r := h.upload(tok, "file", "second.png", pngOf(t, 1600, 20))
	if e := r.wantErr(t, 503, "unavailable"); !strings.Contains(e.Message, "retry in 5 s") || r.Header.Get("Retry-After") != "5" {
		t.Fatalf("refusal = %+v, Retry-After %q", e, r.Header.Get("Retry-After"))
	}
	close(done)
	if st := <-first; st != 201 {
		t.Fatalf("the first upload answered %d", st)
	}
	// With the decoder free again, an upload goes through.
	h.upload(tok, "file", "third.png", pngOf(t, 1600, 20)).want(t, 201)
}

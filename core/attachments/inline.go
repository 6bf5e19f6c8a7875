package attachments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// DataURLs reads a stored image as a data URL (Service.DataURL).
type DataURLs interface {
	DataURL(ctx context.Context, id string) (string, error)
}

// Inliner turns the image references of a run's input into data URLs, for
// the model call alone: entries and trace spans keep the reference, so
// neither carries the bytes. One Inliner serves one run, which reads each
// image once.
type Inliner struct {
	src  DataURLs // nil: the server keeps no images
	log  *slog.Logger
	urls map[string]string // attachment id → data URL
}

// NewInliner returns an Inliner reading from src (nil: no images kept),
// logging to log the images it can no longer read.
func NewInliner(src DataURLs, log *slog.Logger) *Inliner {
	return &Inliner{src: src, log: log, urls: map[string]string{}}
}

// imageRef marks a stored item that refers to an attachment; most items
// fail this test and are never parsed.
var imageRef = []byte(`"attachment_id"`)

// Inline is the input with each image reference resolved into a data URL;
// an input without references is returned as it is.
func (in *Inliner) Inline(ctx context.Context, input []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for i, raw := range input {
		if !bytes.Contains(raw, imageRef) {
			continue
		}
		if out == nil {
			out = append([]json.RawMessage(nil), input...)
		}
		out[i] = in.resolve(ctx, raw)
	}
	if out == nil {
		return input
	}
	return out
}

// resolve rewrites one message's image parts as input_image parts carrying
// the image itself. An image that cannot be read any more is said so in
// words, rather than failing a conversation over one picture.
func (in *Inliner) resolve(ctx context.Context, raw json.RawMessage) json.RawMessage {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	parts := domain.ParseItem(raw).Parts()
	for i, p := range parts {
		if p.Type != domain.PartInputImage || p.AttachmentID == "" {
			continue
		}
		url, err := in.url(ctx, p.AttachmentID)
		if err != nil {
			in.log.Warn("an attached image cannot be read", "attachment_id", p.AttachmentID, "err", err)
			parts[i] = domain.ContentPart{Type: "input_text", Text: "[an attached image (" + p.Name + ") is no longer available]"}
			continue
		}
		parts[i] = domain.ContentPart{Type: domain.PartInputImage, ImageURL: url, Detail: "auto", Mime: p.Mime}
	}
	content, err := json.Marshal(parts)
	if err != nil {
		return raw
	}
	msg["content"] = content
	resolved, err := json.Marshal(msg)
	if err != nil {
		return raw
	}
	return resolved
}

// url is an image's data URL, read once.
func (in *Inliner) url(ctx context.Context, id string) (string, error) {
	if url, ok := in.urls[id]; ok {
		return url, nil
	}
	if in.src == nil {
		return "", errs.E(errs.NotFound, "this server keeps no images")
	}
	url, err := in.src.DataURL(ctx, id)
	if err != nil {
		return "", err
	}
	in.urls[id] = url
	return url, nil
}

// Refusal says plainly that a refused request carried images, the
// likeliest reason a vision-less model or provider turns it down; any
// other error is returned as it is.
func Refusal(err error, input []json.RawMessage) error {
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelInvalid || !carriesImages(input) {
		return err
	}
	said := *me
	said.Message = "the model or provider refused a request carrying images (does it accept image input?): " + me.Message
	return &said
}

func carriesImages(input []json.RawMessage) bool {
	for _, raw := range input {
		if bytes.Contains(raw, imageRef) && domain.ParseItem(raw).HasImages() {
			return true
		}
	}
	return false
}

package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// messageImages checks the images a message is to carry (the caller's, at
// most the per-message cap). Returns validation naming attachment_ids.
func (s *Service) messageImages(ctx context.Context, p domain.Principal, ids []string) ([]domain.Attachment, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if s.d.Attachments == nil {
		return nil, errs.Field("attachment_ids", "this server takes no images")
	}
	return s.d.Attachments.ForMessage(ctx, p, ids)
}

// imageRef marks a stored item that refers to an attachment; most items
// fail this test and are never parsed.
var imageRef = []byte(`"attachment_id"`)

// withImages is the input with each image reference resolved into a data
// URL, for the model call alone: entries and trace spans keep the
// reference, so neither carries the bytes. A run reads each image once.
func (s *Service) withImages(ctx context.Context, rc *runCtx, input []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for i, raw := range input {
		if !bytes.Contains(raw, imageRef) {
			continue
		}
		if out == nil {
			out = append([]json.RawMessage(nil), input...)
		}
		out[i] = s.resolveImages(ctx, rc, raw)
	}
	if out == nil {
		return input
	}
	return out
}

// resolveImages rewrites one message's image parts as input_image parts
// carrying the image itself. An image that cannot be read any more is said
// so in words, rather than failing a conversation over one picture.
func (s *Service) resolveImages(ctx context.Context, rc *runCtx, raw json.RawMessage) json.RawMessage {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	parts := domain.ParseItem(raw).Parts()
	for i, p := range parts {
		if p.Type != domain.PartInputImage || p.AttachmentID == "" {
			continue
		}
		url, err := s.imageURL(ctx, rc, p.AttachmentID)
		if err != nil {
			s.d.Log.Warn("an attached image cannot be read", "attachment_id", p.AttachmentID, "err", err)
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

func (s *Service) imageURL(ctx context.Context, rc *runCtx, id string) (string, error) {
	if url, ok := rc.images[id]; ok {
		return url, nil
	}
	if s.d.Attachments == nil {
		return "", errs.E(errs.NotFound, "this server keeps no images")
	}
	url, err := s.d.Attachments.DataURL(ctx, id)
	if err != nil {
		return "", err
	}
	if rc.images == nil {
		rc.images = map[string]string{}
	}
	rc.images[id] = url
	return url, nil
}

// imageRefusal says plainly that a refused request carried images, the
// likeliest reason a vision-less model or provider turns it down.
func imageRefusal(err error, input []json.RawMessage) error {
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

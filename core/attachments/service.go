// Package attachments keeps the images people send with a message: it
// checks what is uploaded is an image a vision model takes, hands the bytes
// back to their owner only, and reclaims the ones nobody sent.
package attachments

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // registers the JPEG decoder DecodeConfig reads headers with
	_ "image/png"  // and the PNG one
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
)

// maxNameRunes bounds a stored file name; a longer one is cut.
const maxNameRunes = 200

// Service uploads, reads and prunes attachments.
type Service struct {
	store    ports.AttachmentStore
	ids      ports.IDs
	clock    ports.Clock
	opts     Options
	decoders *decoders
}

// New returns the service over its store, decoding uploads within opts's
// bounds.
func New(store ports.AttachmentStore, ids ports.IDs, clock ports.Clock, opts Options) *Service {
	opts = opts.withDefaults()
	return &Service{store: store, ids: ids, clock: clock, opts: opts, decoders: newDecoders(opts.Decoders, opts.DecodeWait, opts.Waiting)}
}

// Upload stores an image the caller sends. It must be a PNG or JPEG (read
// from its bytes, not its name) of at most domain.MaxAttachmentBytes; one
// larger than MaxEdge on its longer side is stored scaled down to it,
// which decodes it: that is refused, before anything is decoded, when its
// header says it would take more than the decode budget (validation
// wrapping ErrTooLarge), and waits for one of the bounded decoders
// (unavailable when none frees in time). Returns validation for anything
// else.
func (s *Service) Upload(ctx context.Context, p domain.Principal, name string, data []byte) (domain.Attachment, error) {
	if len(data) == 0 {
		return domain.Attachment{}, errs.Field("file", "is empty")
	}
	if len(data) > domain.MaxAttachmentBytes {
		return domain.Attachment{}, errs.Field("file", "is %d bytes; an image may be at most %d MiB", len(data), domain.MaxAttachmentBytes>>20)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return domain.Attachment{}, errs.Field("file", "is not a PNG or JPEG image")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return domain.Attachment{}, errs.Field("file", "has no pixels")
	}
	if max(cfg.Width, cfg.Height) > MaxEdge {
		if data, cfg, err = s.scale(ctx, data, cfg, format); err != nil {
			return domain.Attachment{}, err
		}
	}
	a := domain.Attachment{ID: s.ids.NewID(), OwnerID: p.User.ID, Name: cleanName(name), Mime: "image/" + format,
		Size: int64(len(data)), Width: cfg.Width, Height: cfg.Height, CreatedAt: s.clock.Now()}
	if err := s.store.CreateAttachment(ctx, a, data); err != nil {
		return domain.Attachment{}, err
	}
	return a, nil
}

// scale fits an image larger than MaxEdge: refused past the decode
// budget, else decoded once a decoder is free.
func (s *Service) scale(ctx context.Context, data []byte, cfg image.Config, format string) ([]byte, image.Config, error) {
	if cost := decodeCost(data, cfg, format); cost > s.opts.DecodeBudget {
		msg := fmt.Sprintf("is %d×%d pixels: scaling it down would take about %d MiB of memory, past the %d MiB one image may take; "+
			"send it at most %d pixels on its longer side", cfg.Width, cfg.Height, (cost+1<<20-1)>>20, s.opts.DecodeBudget>>20, MaxEdge)
		return nil, cfg, &errs.Error{Code: errs.Validation, Message: "file: " + msg, Fields: map[string]string{"file": msg}, Err: ErrTooLarge}
	}
	release, err := s.decoders.acquire(ctx)
	if err != nil {
		return nil, cfg, err
	}
	defer release()
	if s.opts.Decoding != nil {
		s.opts.Decoding()
	}
	return fit(data, cfg, format)
}

// cleanName keeps the base of a file name, printable and bounded.
func cleanName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" {
		return ""
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes])
	}
	return name
}

// Get returns an attachment of the caller's. Returns not_found for anyone
// else's, as if it did not exist.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Attachment, error) {
	return scoped.Read(ctx, id, s.store.FindAttachment, func(a domain.Attachment) error {
		if a.OwnerID != p.User.ID {
			return errs.E(errs.NotFound, "attachment not found")
		}
		return nil
	})
}

// Open returns an attachment of the caller's with its bytes.
func (s *Service) Open(ctx context.Context, p domain.Principal, id string) (domain.Attachment, []byte, error) {
	a, err := s.Get(ctx, p, id)
	if err != nil {
		return a, nil, err
	}
	data, err := s.store.AttachmentData(ctx, id)
	return a, data, err
}

// ForMessage checks the images a message is to carry: at most
// domain.MaxAttachmentsPerMessage, each the caller's, none twice. Returns
// validation naming attachment_ids.
func (s *Service) ForMessage(ctx context.Context, p domain.Principal, ids []string) ([]domain.Attachment, error) {
	if len(ids) > domain.MaxAttachmentsPerMessage {
		return nil, errs.Field("attachment_ids", "a message carries at most %d images, not %d", domain.MaxAttachmentsPerMessage, len(ids))
	}
	out := make([]domain.Attachment, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return nil, errs.Field("attachment_ids", "%s is listed twice", id)
		}
		seen[id] = true
		a, err := s.Get(ctx, p, id)
		if errs.Is(err, errs.NotFound) {
			return nil, errs.Field("attachment_ids", "no such attachment: %s", id)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// DataURL is the image as a data: URL, how every vendor's API takes an
// image inline. The run builds it for the model call only.
func (s *Service) DataURL(ctx context.Context, id string) (string, error) {
	a, err := s.store.FindAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	data, err := s.store.AttachmentData(ctx, id)
	if err != nil {
		return "", err
	}
	return domain.DataURL(a.Mime, data), nil
}

// Prune deletes the attachments nobody sent within the grace period (an
// upload whose message was never sent, or whose sessions were all deleted).
func (s *Service) Prune(ctx context.Context) (int, error) {
	return s.store.PruneAttachments(ctx, s.clock.Now().Add(-domain.AttachmentOrphanGrace))
}

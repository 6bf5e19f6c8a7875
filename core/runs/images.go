package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
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

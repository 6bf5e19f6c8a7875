package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// AttachmentStore keeps uploaded images: a row each, its bytes beside it. A
// session holds an attachment from the moment an entry referring to it is
// stored (SessionWriter.InsertEntries binds it in that transaction).
type AttachmentStore interface {
	// CreateAttachment stores a and its bytes.
	CreateAttachment(ctx context.Context, a domain.Attachment, data []byte) error
	// FindAttachment returns the row without its bytes; not_found when absent.
	FindAttachment(ctx context.Context, id string) (domain.Attachment, error)
	// AttachmentData returns the bytes; not_found when absent.
	AttachmentData(ctx context.Context, id string) ([]byte, error)
	// PruneAttachments deletes attachments created before cutoff that no
	// session holds, and returns how many went.
	PruneAttachments(ctx context.Context, cutoff time.Time) (int, error)
}

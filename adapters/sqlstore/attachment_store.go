package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

const attachmentColumns = `id, owner_id, name, mime, size, width, height, created_at`

func scanAttachment(r rowScanner) (domain.Attachment, error) {
	var a domain.Attachment
	var created int64
	err := r.Scan(&a.ID, &a.OwnerID, &a.Name, &a.Mime, &a.Size, &a.Width, &a.Height, &created)
	a.CreatedAt = fromMS(created)
	return a, err
}

// CreateAttachment implements ports.AttachmentStore.
func (db *DB) CreateAttachment(ctx context.Context, a domain.Attachment, data []byte) error {
	_, err := db.exec(ctx, `INSERT INTO attachments (`+attachmentColumns+`, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OwnerID, a.Name, a.Mime, a.Size, a.Width, a.Height, ms(a.CreatedAt), data)
	return err
}

// FindAttachment implements ports.AttachmentStore.
func (db *DB) FindAttachment(ctx context.Context, id string) (domain.Attachment, error) {
	a, err := scanAttachment(db.read.QueryRowContext(ctx, `SELECT `+attachmentColumns+` FROM attachments WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, notFound("attachment")
	}
	return a, translate(err)
}

// AttachmentData implements ports.AttachmentStore.
func (db *DB) AttachmentData(ctx context.Context, id string) ([]byte, error) {
	var data []byte
	err := db.read.QueryRowContext(ctx, `SELECT data FROM attachments WHERE id = ?`, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("attachment")
	}
	return data, translate(err)
}

// PruneAttachments implements ports.AttachmentStore.
func (db *DB) PruneAttachments(ctx context.Context, cutoff time.Time) (int, error) {
	r, err := db.exec(ctx, `DELETE FROM attachments WHERE created_at < ?
		AND NOT EXISTS (SELECT 1 FROM attachment_bindings b WHERE b.attachment_id = attachments.id)`, ms(cutoff))
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return int(n), translate(err)
}

// bindAttachments records that the session holds the attachments its
// entries refer to, in the transaction storing them. An id with no row (a
// reference the run never validated) binds nothing.
func (s sessionQ) bindAttachments(ctx context.Context, entries []domain.Entry) error {
	for _, e := range entries {
		if e.Kind != domain.KindItem || !bytes.Contains(e.Item, []byte(`"attachment_id"`)) {
			continue // the cheap test first: almost no entry holds an image
		}
		for _, p := range domain.ParseItem(e.Item).Parts() {
			if p.AttachmentID == "" {
				continue
			}
			if _, err := s.q.ExecContext(ctx, `INSERT INTO attachment_bindings (attachment_id, session_id)
				SELECT id, ? FROM attachments WHERE id = ? ON CONFLICT DO NOTHING`, s.id, p.AttachmentID); err != nil {
				return translate(err)
			}
		}
	}
	return nil
}

package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// uploadSlack is what a multipart envelope may add to an image's bytes.
const uploadSlack = 64 << 10

// AttachmentView is an uploaded image as read.
type AttachmentView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name" doc:"The uploaded file's name, when it had one"`
	Mime      string    `json:"mime" doc:"image/png or image/jpeg, read from the bytes"`
	Size      int64     `json:"size" doc:"Bytes"`
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	CreatedAt time.Time `json:"created_at"`
}

func attachmentView(a domain.Attachment) AttachmentView {
	return AttachmentView{ID: a.ID, Name: a.Name, Mime: a.Mime, Size: a.Size, Width: a.Width, Height: a.Height, CreatedAt: a.CreatedAt}
}

func (s *Server) attachmentRoutes() []Route {
	p := APIPrefix + "/attachments"
	return []Route{
		op(http.MethodPost, p, "uploadAttachment", "attachments",
			"Upload an image (PNG or JPEG, at most 10 MiB) to send with a message (attachment_ids of a run); one no message carries is deleted after 24 hours",
			http.StatusCreated, s.handleUploadAttachment).WithUpload("file", domain.MaxAttachmentBytes+uploadSlack),
		raw(http.MethodGet, p+"/:id", "getAttachment", "attachments",
			"The image's bytes, with its content type (its uploader only)", "image/*", s.handleGetAttachment),
	}
}

func (s *Server) handleUploadAttachment(c echo.Context, _ *NoBody) (AttachmentView, error) {
	name, data, err := readUpload(c.Request(), "file", domain.MaxAttachmentBytes)
	if err != nil {
		return AttachmentView{}, err
	}
	a, err := s.deps.Attachments.Upload(c.Request().Context(), caller(c), name, data)
	var coded *errs.Error
	switch {
	case errors.Is(err, attachments.ErrTooLarge) && errors.As(err, &coded):
		// Too many pixels to decode is too large, as too many bytes is.
		return AttachmentView{}, withStatus(http.StatusRequestEntityTooLarge, coded)
	case errs.Is(err, errs.Unavailable):
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(attachments.DecodeRetryAfter/time.Second)))
	}
	return attachmentView(a), err
}

// readUpload reads the file in one part of a multipart/form-data body, at
// most limit bytes of it (413 beyond). Other parts are skipped.
func readUpload(r *http.Request, part string, limit int64) (string, []byte, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return "", nil, errs.Field(part, "send the file as multipart/form-data in a part named %q", part)
	}
	for {
		pt, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return "", nil, errs.Field(part, "is required: no part named %q", part)
		}
		if err != nil {
			return "", nil, bodyReadError(err)
		}
		if pt.FormName() != part {
			continue
		}
		// The name is stored with the image; no store keeps a NUL alike.
		if domain.HasNUL(pt.FileName()) {
			return "", nil, errs.Field(part, "has a file name that %s", domain.NULMessage)
		}
		data, err := io.ReadAll(io.LimitReader(pt, limit+1))
		if err != nil {
			return "", nil, bodyReadError(err)
		}
		if int64(len(data)) > limit {
			return "", nil, withStatus(http.StatusRequestEntityTooLarge,
				errs.Field(part, "is larger than the %s limit", humanBytes(limit)))
		}
		return pt.FileName(), data, nil
	}
}

func (s *Server) handleGetAttachment(c echo.Context) error {
	a, data, err := s.deps.Attachments.Open(c.Request().Context(), caller(c), c.Param("id"))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	// Its bytes never change: the browser may keep them, for this user only.
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	if a.Name != "" {
		h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`inline; filename="%s"`, unsafeFileChars.ReplaceAllString(a.Name, "_")))
	}
	return c.Blob(http.StatusOK, a.Mime, data)
}

package domain

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Attachment limits: an image is at most MaxAttachmentBytes, a message
// carries at most MaxAttachmentsPerMessage, and one nobody sent is reclaimed
// after AttachmentOrphanGrace.
const (
	MaxAttachmentBytes       = 10 << 20
	MaxAttachmentsPerMessage = 8
	AttachmentOrphanGrace    = 24 * time.Hour
)

// AttachmentMimes are the image types a message may carry: the ones every
// vendor's vision input takes.
var AttachmentMimes = []string{"image/png", "image/jpeg"}

// Attachment is an image a person uploaded to send with a message. Its
// bytes are stored apart from the row and from the entries: a history read
// carries only the reference (an input_image part naming the id).
type Attachment struct {
	ID        string    `json:"id"`
	OwnerID   string    `json:"-"`
	Name      string    `json:"name"`
	Mime      string    `json:"mime"`
	Size      int64     `json:"size"`
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	CreatedAt time.Time `json:"created_at"`
}

// PartInputImage is the content part type of an image in a message.
const PartInputImage = "input_image"

// ContentPart is one part of a message's content list: text, or an image.
// A stored image names its attachment; the run resolves it into ImageURL (a
// data URL) only for the model call, so entries never hold the bytes.
type ContentPart struct {
	Type         string `json:"type"`
	Text         string `json:"text,omitempty"`
	ImageURL     string `json:"image_url,omitempty"`
	Detail       string `json:"detail,omitempty"`
	AttachmentID string `json:"attachment_id,omitempty"`
	Mime         string `json:"mime,omitempty"`
	Width        int    `json:"width,omitempty"`
	Height       int    `json:"height,omitempty"`
	Name         string `json:"name,omitempty"`
}

// Parts reads a message's content as parts; a string content is one text
// part.
func (it Item) Parts() []ContentPart {
	if len(it.Content) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return []ContentPart{{Type: "input_text", Text: s}}
	}
	var parts []ContentPart
	_ = json.Unmarshal(it.Content, &parts) // unreadable content has no parts
	return parts
}

// HasImages reports whether a message carries an image part.
func (it Item) HasImages() bool {
	for _, p := range it.Parts() {
		if p.Type == PartInputImage {
			return true
		}
	}
	return false
}

// UserMessage is the user's message: its text (when any) and a reference
// to each attached image.
func UserMessage(text string, images []Attachment) json.RawMessage {
	if len(images) == 0 {
		return TextMessage("user", "input_text", text)
	}
	parts := make([]ContentPart, 0, len(images)+1)
	if text != "" {
		parts = append(parts, ContentPart{Type: "input_text", Text: text})
	}
	for _, a := range images {
		parts = append(parts, a.Part())
	}
	return mustJSON(map[string]any{"type": "message", "role": "user", "content": parts})
}

// DataURL is data as a base64 data: URL, how every vendor's API takes an
// image inline.
func DataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// ParseDataURL splits a base64 data: URL into its media type and its
// (still encoded) data; ok is false for anything else.
func ParseDataURL(url string) (mime, b64 string, ok bool) {
	rest, isData := strings.CutPrefix(url, "data:")
	head, b64, found := strings.Cut(rest, ",")
	mime, isBase64 := strings.CutSuffix(head, ";base64")
	return mime, b64, isData && found && isBase64 && mime != ""
}

// Part is the content part that refers to the attachment.
func (a Attachment) Part() ContentPart {
	return ContentPart{Type: PartInputImage, AttachmentID: a.ID, Mime: a.Mime, Width: a.Width, Height: a.Height, Name: a.Name}
}

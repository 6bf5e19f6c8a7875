package scripted

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // the decoders DecodeConfig reads the images' headers with
	_ "image/png"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

// What a vision model was shown: each protocol carries an image in its own
// part, and the echo says which part it read and what the image was, so a
// test can tell an image reached the model in its vendor's format.

// How each protocol's image part is named in the echo.
const (
	viaResponses = "input_image"
	viaChat      = "image_url"
	viaMessages  = "image block"
)

// seenImages are the images of the last user message and the part they
// came in.
type seenImages struct {
	via    string
	images []string // "<mime> <w>x<h>", or why it could not be read
}

func (s seenImages) String() string {
	if len(s.images) == 0 {
		return ""
	}
	return fmt.Sprintf("[images: %s via %s]", strings.Join(s.images, ", "), s.via)
}

// imagesIn reads the image parts of a content list in api's shape.
func imagesIn(api string, content json.RawMessage) seenImages {
	var parts []struct {
		Type     string          `json:"type"`
		ImageURL json.RawMessage `json:"image_url"` // a string (Responses) or {url} (Chat)
		Source   struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	_ = json.Unmarshal(content, &parts) // a string content holds no image
	var seen seenImages
	for _, p := range parts {
		switch {
		case api == APIResponses && p.Type == "input_image":
			var url string
			_ = json.Unmarshal(p.ImageURL, &url)
			seen.via = viaResponses
			seen.images = append(seen.images, describeDataURL(url))
		case api == APIChatCompletions && p.Type == "image_url":
			var u struct {
				URL string `json:"url"`
			}
			_ = json.Unmarshal(p.ImageURL, &u)
			seen.via = viaChat
			seen.images = append(seen.images, describeDataURL(u.URL))
		case api == APIMessages && p.Type == "image":
			seen.via = viaMessages
			seen.images = append(seen.images, describe(p.Source.MediaType, p.Source.Data))
		}
	}
	return seen
}

func describeDataURL(url string) string {
	mime, data, ok := domain.ParseDataURL(url)
	if !ok {
		return "not a base64 data URL"
	}
	return describe(mime, data)
}

// describe is "<mime> <w>x<h>" of a base64 image, from its decoded header.
func describe(mime, b64 string) string {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return mime + " (not base64)"
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return mime + " (not an image)"
	}
	return fmt.Sprintf("%s %dx%d", mime, cfg.Width, cfg.Height)
}

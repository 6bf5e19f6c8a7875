package attachments

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

func encoded(t *testing.T, format string, w, h int) ([]byte, image.Config) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&b, img, nil)
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), cfg
}

func TestFitScalesTheLongerSideDownAndKeepsTheFormat(t *testing.T) {
	for _, c := range []struct {
		format       string
		w, h         int
		wantW, wantH int
	}{
		{"png", 3136, 1000, 1568, 500},
		{"jpeg", 800, 4704, 266, 1568},
		{"png", 1568, 1568, 1568, 1568},
	} {
		data, cfg := encoded(t, c.format, c.w, c.h)
		out, got, err := fit(data, cfg, c.format)
		if err != nil {
			t.Fatal(err)
		}
		if got.Width != c.wantW || got.Height != c.wantH {
			t.Fatalf("%dx%d → %dx%d, want %dx%d", c.w, c.h, got.Width, got.Height, c.wantW, c.wantH)
		}
		back, format, err := image.DecodeConfig(bytes.NewReader(out))
		if err != nil || format != c.format || back.Width != c.wantW || back.Height != c.wantH {
			t.Fatalf("stored %s %dx%d (%v), want %s %dx%d", format, back.Width, back.Height, err, c.format, c.wantW, c.wantH)
		}
		if c.w <= MaxEdge && c.h <= MaxEdge && !bytes.Equal(out, data) {
			t.Fatal("an image within the limit was re-encoded")
		}
	}
}

// An image whose header claims more pixels than can be decoded safely is
// refused before any decode.
func TestFitRefusesAPixelBomb(t *testing.T) {
	data, _ := encoded(t, "png", 1, 1)
	// Rewrite IHDR (after the 8-byte signature and the chunk's length and
	// type) to claim 20000×20000, with its checksum.
	binary.BigEndian.PutUint32(data[16:], 20000)
	binary.BigEndian.PutUint32(data[20:], 20000)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 20000 {
		t.Fatalf("crafted header reads as %+v %s %v", cfg, format, err)
	}
	if _, _, err := fit(data, cfg, format); !errs.Is(err, errs.Validation) || errs.FieldsOf(err)["file"] == "" {
		t.Fatalf("pixel bomb: %v", err)
	}
}

package attachments

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/draw"
)

// pattern is a w×h image with detail everywhere (gradients crossed with a
// checker), so a scaling fault shows in its pixels. Its values keep clear
// of 0 and 255 by more than the kernel's ringing: where that is clipped
// the two-pass scale may differ from one pass by a few levels.
func pattern(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := uint8(64)
			if (x/7+y/5)%2 == 0 {
				c = 192
			}
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(32 + x*191/w), G: uint8(32 + y*191/h), B: c, A: 255})
		}
	}
	return img
}

func encodedImage(t testing.TB, format string, img image.Image) ([]byte, image.Config) {
	t.Helper()
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
		{"png", 1569, 1569, 1568, 1568},
	} {
		data, cfg := encodedImage(t, c.format, image.NewRGBA(image.Rect(0, 0, c.w, c.h)))
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
	}
}

// The banded two-pass scale gives what one Catmull-Rom pass over the whole
// image gives, short of the rounding of its 8-bit intermediate: no seam
// where bands meet, nothing shifted.
func TestScaleDownMatchesOneKernelPass(t *testing.T) {
	for _, size := range [][4]int{{2000, 1301, 1568, 1019}, {700, 3000, 365, 1568}} {
		src := pattern(size[0], size[1])
		got := scaleDown(src, size[2], size[3])
		want := image.NewRGBA(image.Rect(0, 0, size[2], size[3]))
		draw.CatmullRom.Scale(want, want.Bounds(), src, src.Bounds(), draw.Src, nil)
		worst := 0
		for i := range want.Pix {
			worst = max(worst, abs(int(got.Pix[i])-int(want.Pix[i])))
		}
		if worst > 1 {
			t.Fatalf("%v: a channel differs by %d from one pass", size, worst)
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

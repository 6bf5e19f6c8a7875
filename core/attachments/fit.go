package attachments

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"

	"github.com/agents-server/agents-server/core/errs"
)

// MaxEdge is the longest side an image is kept at: vision models gain
// nothing past it (Anthropic scales larger images down to it itself), and a
// 4K screenshot shrinks to what every vendor's per-image limit takes.
const MaxEdge = 1568

// band is how many rows, then columns, one kernel pass scales at a time.
// x/image's kernel scaler keeps 32 bytes per destination column per source
// row it reads: one pass over a whole 7000-row image took 350 MB beside
// the image itself; a band of 32 takes a few MiB.
const band = 32

// fitted is the size an image whose longer side passes MaxEdge is kept at.
func fitted(cfg image.Config) (w, h int) {
	w, h = cfg.Width, cfg.Height
	if w >= h {
		return MaxEdge, max(1, h*MaxEdge/w)
	}
	return max(1, w*MaxEdge/h), MaxEdge
}

// fit decodes an image whose longer side passes MaxEdge and scales it
// down to it, keeping its format (a PNG stays lossless). The caller has
// checked its decode cost against the budget and holds a decoder.
func fit(data []byte, cfg image.Config, format string) ([]byte, image.Config, error) {
	var src image.Image
	var err error
	if format == "jpeg" {
		src, err = jpeg.Decode(bytes.NewReader(data))
	} else {
		src, err = png.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, cfg, errs.Field("file", "could not be decoded: %v", err)
	}
	w, h := fitted(cfg)
	dst := scaleDown(src, w, h)
	var out bytes.Buffer
	if format == "jpeg" {
		err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&out, dst)
	}
	if err != nil {
		return nil, cfg, errs.Wrap(errs.Internal, err, "re-encode a scaled image")
	}
	return out.Bytes(), image.Config{ColorModel: dst.ColorModel(), Width: w, Height: h}, nil
}

// scaleDown resizes src to w×h with the Catmull-Rom kernel in two
// separable passes, each over bands: across every band of rows into an
// intermediate w wide and as tall as src, then down every band of its
// columns. A band keeps its extent on the axis it does not scale, where
// the kernel's weights are the identity, so bands meet without seams.
func scaleDown(src image.Image, w, h int) *image.RGBA {
	sr := src.Bounds()
	sw, sh := sr.Dx(), sr.Dy()
	mid := image.NewRGBA(image.Rect(0, 0, w, sh))
	across := draw.CatmullRom.NewScaler(w, band, sw, band)
	for y := 0; y < sh; y += band {
		y1 := min(y+band, sh)
		to, from := image.Rect(0, y, w, y1), image.Rect(sr.Min.X, sr.Min.Y+y, sr.Max.X, sr.Min.Y+y1)
		if y1-y == band {
			across.Scale(mid, to, src, from, draw.Src, nil)
		} else {
			draw.CatmullRom.Scale(mid, to, src, from, draw.Src, nil)
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	down := draw.CatmullRom.NewScaler(band, h, band, sh)
	for x := 0; x < w; x += band {
		x1 := min(x+band, w)
		to, from := image.Rect(x, 0, x1, h), image.Rect(x, 0, x1, sh)
		if x1-x == band {
			down.Scale(dst, to, mid, from, draw.Src, nil)
		} else {
			draw.CatmullRom.Scale(dst, to, mid, from, draw.Src, nil)
		}
	}
	return dst
}

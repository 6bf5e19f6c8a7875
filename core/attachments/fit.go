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

// maxPixels bounds what is decoded to be scaled: an image's header can
// claim a size whose pixels would take gigabytes.
const maxPixels = 50_000_000

// fit scales an image whose longer side passes MaxEdge down to it, keeping
// its format (a PNG stays lossless); a smaller one is kept byte for byte.
func fit(data []byte, cfg image.Config, format string) ([]byte, image.Config, error) {
	if max(cfg.Width, cfg.Height) <= MaxEdge {
		return data, cfg, nil
	}
	if cfg.Width*cfg.Height > maxPixels {
		return nil, cfg, errs.Field("file", "is %d×%d pixels; at most %d megapixels can be scaled down", cfg.Width, cfg.Height, maxPixels/1_000_000)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, cfg, errs.Field("file", "could not be decoded: %v", err)
	}
	w, h := cfg.Width, cfg.Height
	if w >= h {
		w, h = MaxEdge, max(1, h*MaxEdge/w)
	} else {
		w, h = max(1, w*MaxEdge/h), MaxEdge
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
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

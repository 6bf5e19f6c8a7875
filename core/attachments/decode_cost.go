package attachments

import "image"

// decodeOverhead is what a decode allocates whatever the image's size:
// the PNG decoder's inflate window and row buffers, the JPEG decoder's
// tables, the encoder's compressor state.
const decodeOverhead = 2 << 20

// decodeCost is what fitting an image allocates, in bytes, read from its
// header before anything is decoded: its pixels as the standard library's
// decoder holds them, the scaling passes, and the re-encoded result. It is
// an upper bound on every byte the decode allocates, garbage included (the
// collector frees it only later), so a budget compared with it bounds the
// memory one upload can take. Neither image/png nor image/jpeg (nor
// golang.org/x/image) can decode at a reduced scale, so the whole image is
// always decoded first.
func decodeCost(data []byte, cfg image.Config, format string) int64 {
	var pixels int64
	if format == "jpeg" {
		pixels = jpegDecodeBytes(data, cfg)
	} else {
		pixels = pngDecodeBytes(data, cfg)
	}
	return pixels + scaleCost(cfg) + decodeOverhead
}

// pngDecodeBytes is what image/png allocates for an image: 1 byte a pixel
// for a palette, 8 for 16-bit samples, else up to 4 (gray or RGB with a
// transparent colour decodes to NRGBA, which the header does not tell).
// An interlaced image decodes each of its seven passes into an image of
// its own as well, together as large again.
func pngDecodeBytes(data []byte, cfg image.Config) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if len(data) < 29 { // DecodeConfig read the IHDR chunk, so not reached
		return 16 * pixels
	}
	// IHDR follows the 8-byte signature and its chunk's length and type.
	depth, colorType, interlaced := data[24], data[25], data[28] == 1
	perPixel := int64(4)
	switch {
	case colorType == 3:
		perPixel = 1
	case depth == 16:
		perPixel = 8
	}
	n := pixels * perPixel
	if interlaced {
		n *= 2
	}
	return n
}

// jpegDecodeBytes is what image/jpeg allocates for an image: each
// component's samples, in whole 8×8 blocks of its own sampling; for a
// progressive image each block's 64 coefficients (int32) besides, kept
// between scans; for a four-component one the CMYK image it converts to.
func jpegDecodeBytes(data []byte, cfg image.Config) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	f, ok := jpegFrameOf(data)
	if !ok { // DecodeConfig read the frame, so not reached: the worst case
		return 24 * pixels
	}
	hmax, vmax := 1, 1
	for _, c := range f.comps {
		hmax, vmax = max(hmax, c.h), max(vmax, c.v)
	}
	mxx := int64((cfg.Width + 8*hmax - 1) / (8 * hmax))
	myy := int64((cfg.Height + 8*vmax - 1) / (8 * vmax))
	var samples int64
	for _, c := range f.comps {
		samples += 8 * int64(c.h) * mxx * 8 * int64(c.v) * myy
	}
	n := samples
	if f.progressive {
		n += 4 * samples
	}
	if len(f.comps) == 4 {
		n += 4 * pixels
	}
	return n
}

// scaleCost is what scaleDown and the re-encoding allocate: the
// intermediate (the target's width by the source's height) and the result,
// 4 bytes a pixel each; the kernel scaler's float rows (32 bytes a sample,
// one band each way, twice over should a collection empty its pool) and its
// weights (16 bytes a tap, about four taps per source pixel of an axis);
// and the encoded bytes, whose buffer grows by doubling to at most twice
// the result's pixels.
func scaleCost(cfg image.Config) int64 {
	sw, sh := int64(cfg.Width), int64(cfg.Height)
	w, h := fitted(cfg)
	dw, dh := int64(w), int64(h)
	mid, dst := 4*dw*sh, 4*dw*dh
	floats := 2 * 32 * band * (dw + sh)
	weights := 16 * 4 * (sw + sh)
	return mid + dst + floats + weights + 2*dst
}

// jpegFrame is what a JPEG's frame header says about how it decodes.
type jpegFrame struct {
	progressive bool
	comps       []jpegComponent
}

// jpegComponent is one component's sampling factors.
type jpegComponent struct{ h, v int }

// jpegFrameOf finds the frame header (SOF0, SOF1 or SOF2: what image/jpeg
// decodes) by walking the segments before it.
func jpegFrameOf(data []byte) (jpegFrame, bool) {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xff {
			return jpegFrame{}, false
		}
		marker := data[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		i += 2
		if marker == 0x01 || (marker >= 0xd0 && marker <= 0xd8) { // no length
			continue
		}
		n := int(data[i])<<8 | int(data[i+1])
		if n < 2 || i+n > len(data) {
			return jpegFrame{}, false
		}
		seg := data[i+2 : i+n]
		switch marker {
		case 0xc0, 0xc1, 0xc2:
			return parseJPEGFrame(seg, marker == 0xc2)
		case 0xda, 0xd9: // a scan or the end before any frame
			return jpegFrame{}, false
		}
		i += n
	}
	return jpegFrame{}, false
}

// parseJPEGFrame reads a frame header's components: precision (1), height
// (2), width (2), count (1), then per component its id, sampling factors
// (h<<4 | v) and quantization table.
func parseJPEGFrame(seg []byte, progressive bool) (jpegFrame, bool) {
	if len(seg) < 6 {
		return jpegFrame{}, false
	}
	count := int(seg[5])
	if count < 1 || count > 4 || len(seg) < 6+3*count {
		return jpegFrame{}, false
	}
	f := jpegFrame{progressive: progressive}
	for c := range count {
		hv := seg[6+3*c+1]
		h, v := int(hv>>4), int(hv&0x0f)
		if h < 1 || h > 4 || v < 1 || v > 4 {
			return jpegFrame{}, false
		}
		f.comps = append(f.comps, jpegComponent{h, v})
	}
	return f, true
}

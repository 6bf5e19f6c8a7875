package attachments

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"os"
	"runtime"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

// streamedPNG is a genuine w×h 8-bit RGB PNG of black, written row by row
// so that making a 7000×7000 one takes a few hundred KB, not its pixels:
// what an upload claiming many pixels in few bytes looks like.
func streamedPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		out.WriteString(typ)
		out.Write(data)
		out.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(append([]byte(typ), data...))))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0)) // 8-bit RGB, not interlaced
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+3*w) // filter byte, then the samples
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// fixture reads an image made elsewhere: what Go's encoders cannot write
// (progressive and CMYK JPEG, interlaced PNG).
func fixture(t *testing.T, name string) ([]byte, image.Config, string) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return data, cfg, format
}

// The estimate a budget is compared with bounds every byte fitting an
// image allocates, for each way the decoders hold pixels, so the budget
// bounds an upload's memory.
func TestDecodeCostBoundsWhatFitAllocates(t *testing.T) {
	if raceDetector {
		// The test task runs this package again without -race.
		t.Skip("allocations under the race detector are the detector's: run without -race (go tool task test does)")
	}
	type sample struct {
		name   string
		data   []byte
		cfg    image.Config
		format string
	}
	var samples []sample
	add := func(name, format string, img image.Image) {
		data, cfg := encodedImage(t, format, img)
		samples = append(samples, sample{name, data, cfg, format})
	}
	r := image.Rect(0, 0, 1700, 1100)
	src := pattern(r.Dx(), r.Dy())
	translucent := image.NewNRGBA(r)
	copy(translucent.Pix, src.Pix)
	translucent.Pix[3] = 7
	gray, gray16, deep, paletted := image.NewGray(r), image.NewGray16(r), image.NewRGBA64(r), image.NewPaletted(r, palette.Plan9)
	for _, img := range []interface{ Set(x, y int, c color.Color) }{gray, gray16, deep, paletted} {
		for y := 0; y < r.Dy(); y += 3 {
			for x := 0; x < r.Dx(); x += 2 {
				img.Set(x, y, src.At(x, y))
			}
		}
	}
	add("png rgb", "png", src)
	add("png nrgba", "png", translucent)
	add("png gray", "png", gray)
	add("png gray16", "png", gray16)
	add("png rgba64", "png", deep)
	add("png paletted", "png", paletted)
	add("png tall", "png", pattern(200, 3000))
	add("jpeg 4:2:0", "jpeg", src)
	add("jpeg gray", "jpeg", gray)
	for _, name := range []string{"progressive.jpg", "cmyk.jpg", "interlaced.png"} {
		data, cfg, format := fixture(t, name)
		samples = append(samples, sample{name, data, cfg, format})
	}
	for _, s := range samples {
		cost := decodeCost(s.data, s.cfg, s.format)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, _, err := fit(s.data, s.cfg, s.format)
		runtime.ReadMemStats(&after)
		if err != nil || len(out) == 0 {
			t.Fatalf("%s: %v", s.name, err)
		}
		took := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%-16s %5d×%-5d allocated %4d MiB, estimated %4d MiB", s.name, s.cfg.Width, s.cfg.Height, took>>20, cost>>20)
		if took > cost {
			t.Errorf("%s: fitting allocated %d bytes, past the estimate of %d", s.name, took, cost)
		}
	}
}

// The default budget takes the large images people send (an 8K screenshot,
// a 48-megapixel phone photo) and refuses a 7000×7000 PNG and a large
// progressive photo, by their headers alone.
func TestTheDefaultBudgetByHeader(t *testing.T) {
	rgb := streamedPNG(t, 1, 1) // the estimate reads its depth, colour type and interlacing; the size is the config's
	jpegHeader := func(progressive bool) []byte {
		data, _ := encodedImage(t, "jpeg", image.NewYCbCr(image.Rect(0, 0, 16, 16), image.YCbCrSubsampleRatio420))
		if i := bytes.Index(data, []byte{0xff, 0xc0}); progressive && i > 0 {
			data[i+1] = 0xc2
		}
		return data
	}
	for _, c := range []struct {
		name   string
		data   []byte
		format string
		w, h   int
		fits   bool
	}{
		{"8K screenshot", rgb, "png", 7680, 4320, true},
		{"48 MP photo", jpegHeader(false), "jpeg", 8064, 6048, true},
		{"12 MP progressive photo", jpegHeader(true), "jpeg", 4000, 3000, true},
		{"7000×7000 PNG", rgb, "png", 7000, 7000, false},
		{"24 MP progressive photo", jpegHeader(true), "jpeg", 6000, 4000, false},
	} {
		cost := decodeCost(c.data, image.Config{Width: c.w, Height: c.h}, c.format)
		if fits := cost <= DefaultDecodeBudget; fits != c.fits {
			t.Errorf("%s: estimated %d MiB; within the %d MiB budget = %v, want %v", c.name, cost>>20, DefaultDecodeBudget>>20, fits, c.fits)
		}
	}
}

// An image past the budget is refused, naming the limit, before it is
// decoded or waits for a decoder.
func TestScaleRefusesPastTheBudgetWithoutDecoding(t *testing.T) {
	decoded := 0
	s := New(nil, nil, nil, Options{Decoding: func() { decoded++ }})
	data := streamedPNG(t, 7000, 7000)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.scale(context.Background(), data, cfg, format)
	if !errors.Is(err, ErrTooLarge) || !errs.Is(err, errs.Validation) || !bytes.Contains([]byte(errs.FieldsOf(err)["file"]), []byte("192 MiB")) {
		t.Fatalf("7000×7000: %v", err)
	}
	if decoded != 0 {
		t.Fatalf("decoded %d times", decoded)
	}
	ok := streamedPNG(t, 1600, 50)
	cfg, format, _ = image.DecodeConfig(bytes.NewReader(ok))
	if _, got, err := s.scale(context.Background(), ok, cfg, format); err != nil || got.Width != MaxEdge || decoded != 1 {
		t.Fatalf("1600×50: %+v %v, decoded %d", got, err, decoded)
	}
}

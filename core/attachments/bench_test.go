package attachments

import (
	"bytes"
	"context"
	"errors"
	"image"
	"testing"
)

// benchmarkScale fits a streamed w×h PNG as an upload does, reporting the
// bytes one fit allocates (B/op, which bounds its peak) beside the
// estimate the budget is compared with. Before the budget and the banded
// scale, a 7000×7000 PNG allocated 559 MB a fit and a 5000×5000 one 362 MB.
func benchmarkScale(b *testing.B, w, h int, refused bool) {
	s := New(nil, nil, nil, Options{})
	data := streamedPNG(b, w, h)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, err := s.scale(context.Background(), data, cfg, format)
		if refused != errors.Is(err, ErrTooLarge) || (!refused && err != nil) {
			b.Fatalf("%d×%d: %v", w, h, err)
		}
	}
	b.ReportMetric(float64(decodeCost(data, cfg, format))/(1<<20), "estimate-MiB")
}

func BenchmarkScale7000x7000PNG(b *testing.B) { benchmarkScale(b, 7000, 7000, true) }
func BenchmarkScale5000x5000PNG(b *testing.B) { benchmarkScale(b, 5000, 5000, false) }
func BenchmarkScale7680x4320PNG(b *testing.B) { benchmarkScale(b, 7680, 4320, false) }

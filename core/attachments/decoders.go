package attachments

import (
	"context"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// The bounds on decoding uploads, unless Options say otherwise.
const (
	// DefaultDecoders is how many uploads are decoded at once: with
	// DefaultDecodeBudget each, decoding takes at most 384 MiB in all.
	DefaultDecoders = 2
	// DefaultDecodeBudget admits an 8K screenshot (7680×4320 PNG) or a
	// 48-megapixel phone photo (baseline JPEG) and refuses a 7000×7000 PNG.
	DefaultDecodeBudget = 192 << 20
	// DefaultDecodeWait is how long an upload waits for a free decoder.
	DefaultDecodeWait = 15 * time.Second
)

// DecodeRetryAfter is the wait an upload refused for want of a decoder is
// told to take: a decode of the largest admitted image takes a few
// seconds, so this is a pace for the client, not a promise.
const DecodeRetryAfter = 5 * time.Second

// ErrTooLarge marks the refusal of an image whose decoding would pass the
// decode budget (a validation error naming file); the HTTP edge answers it
// 413, as it does a file past the byte limit.
var ErrTooLarge = errors.New("image too large to decode")

// Options bound the decoding of uploads that must be scaled down. Zero
// fields take the defaults.
type Options struct {
	// Decoders is how many uploads may be decoded at once
	// (DefaultDecoders).
	Decoders int
	// DecodeBudget bounds, in bytes, what decoding, scaling and
	// re-encoding one upload may allocate, estimated from its header
	// before anything is decoded (DefaultDecodeBudget).
	DecodeBudget int64
	// DecodeWait bounds how long an upload waits for a free decoder
	// (DefaultDecodeWait).
	DecodeWait time.Duration
	// Decoding, when set, is called as each decode begins, while it holds
	// its decoder, and Waiting as an upload starts to wait because every
	// decoder is taken: windows onto the bound for tests and metrics. A
	// Decoding that blocks keeps the decoder.
	Decoding func()
	Waiting  func()
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Decoders <= 0 {
		o.Decoders = DefaultDecoders
	}
	if o.DecodeBudget <= 0 {
		o.DecodeBudget = DefaultDecodeBudget
	}
	if o.DecodeWait <= 0 {
		o.DecodeWait = DefaultDecodeWait
	}
	return o
}

// decoders is the semaphore the decodes share: each may take the budget,
// so together they take at most Decoders times it.
type decoders struct {
	slots   chan struct{}
	wait    time.Duration
	waiting func() // nil, or Options.Waiting
}

func newDecoders(n int, wait time.Duration, waiting func()) *decoders {
	return &decoders{slots: make(chan struct{}, n), wait: wait, waiting: waiting}
}

// acquire takes a decoder, waiting at most d.wait for one; release gives
// it back. Returns unavailable when none frees in time or ctx ends first
// (the upload is then dropped, nothing decoded).
func (d *decoders) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-d.slots }
	select {
	case d.slots <- struct{}{}:
		return release, nil
	default:
	}
	if d.waiting != nil {
		d.waiting()
	}
	timer := time.NewTimer(d.wait)
	defer timer.Stop()
	select {
	case d.slots <- struct{}{}:
		return release, nil
	case <-timer.C:
		return nil, errs.E(errs.Unavailable, "the server is busy scaling down %d other images; retry in %d s",
			cap(d.slots), int(DecodeRetryAfter/time.Second))
	case <-ctx.Done():
		return nil, errs.Wrap(errs.Unavailable, ctx.Err(), "the upload ended while it waited to be scaled down")
	}
}

package attachments

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// A decoder is taken at once while one is free; past them a caller waits
// and gives up, unavailable, when the wait ends or its request does.
func TestDecodersWaitThenGiveUp(t *testing.T) {
	d := newDecoders(1, 20*time.Millisecond, nil)
	release, err := d.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.acquire(context.Background()); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("past the decoders: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d.wait = time.Hour
	if _, err := d.acquire(ctx); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("a cancelled request: %v", err)
	}
	release()
	again, err := d.acquire(ctx) // a free decoder is taken even so
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	again()
}

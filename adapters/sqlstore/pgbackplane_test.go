package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// TestTheBackplaneCarriesEveryMessageInOrder: two replicas' backplanes on one
// Postgres database; what one publishes — small messages and ones past
// NOTIFY's limit, which go by reference — reaches the other, and itself,
// every message once and in order.
func TestTheBackplaneCarriesEveryMessageInOrder(t *testing.T) {
	url := pgtest.URL(t, "backplane suite on Postgres")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func() (*DB, *PGBackplane) {
		db, err := OpenPostgres(ctx, url, quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		backplane, err := db.Backplane(quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(backplane.Close)
		return db, backplane
	}
	_, a := open()
	_, b := open()
	type inbox struct {
		mu        sync.Mutex
		got       []string
		listening bool // told it listens before any message
	}
	listen := func(backplane *PGBackplane) *inbox {
		in := &inbox{}
		go backplane.Listen(ctx, func(p []byte) {
			in.mu.Lock()
			in.got = append(in.got, string(p))
			in.mu.Unlock()
		}, func(up bool) {
			in.mu.Lock()
			if up { // listening: said before any message
				in.listening = len(in.got) == 0
			}
			in.mu.Unlock()
		})
		return in
	}
	atA, atB := listen(a), listen(b)
	time.Sleep(300 * time.Millisecond) // both LISTEN before the first NOTIFY

	var sent []string
	for i := range 600 {
		m := fmt.Sprintf(`{"n":%d}`, i)
		if i%50 == 7 {
			m = fmt.Sprintf(`{"n":%d,"big":%q}`, i, strings.Repeat("x", 20_000+i))
		}
		sent = append(sent, m)
		a.Publish([]byte(m))
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, in := range []*inbox{atA, atB} {
		for {
			in.mu.Lock()
			n := len(in.got)
			in.mu.Unlock()
			if n >= len(sent) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		in.mu.Lock()
		got := append([]string(nil), in.got...)
		in.mu.Unlock()
		if len(got) != len(sent) {
			t.Fatalf("received %d of %d messages", len(got), len(sent))
		}
		in.mu.Lock()
		listening := in.listening
		in.mu.Unlock()
		if !listening {
			t.Fatal("the listener was not told it listens before the first message")
		}
		for i := range sent {
			if got[i] != sent[i] {
				t.Fatalf("message %d arrived as %.60q, want %.60q", i, got[i], sent[i])
			}
		}
	}
}

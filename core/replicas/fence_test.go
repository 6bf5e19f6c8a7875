package replicas_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/ports/porttest"
)

// reconnect tells every listener on the network what a backplane tells
// it when it begins listening again.
func (n *network) reconnect() {
	n.mu.Lock()
	ls := make([]*listener, 0, len(n.listeners))
	for _, l := range n.listeners {
		ls = append(ls, l)
	}
	n.mu.Unlock()
	for _, l := range ls {
		l.ctl <- true
	}
}

// settle lets a bubble's replicas ping each other: the first pings may
// go before the others listen; the next ones are heard.
func settle() {
	time.Sleep(2 * replicas.PingEvery)
	synctest.Wait()
}

// closeAsync runs a closing from r in the background; the channel gets
// how long it took once it answered.
func closeAsync(r *replica, userID, tokenID string) chan time.Duration {
	done := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		r.link.Streams(r.streams).CloseToken(userID, tokenID, "revoked")
		done <- time.Since(began)
	}()
	return done
}

// TestAClosingAnswersOnceEveryReplicaDroppedTheCredential holds the
// acknowledgement: a closing does not answer while a live replica has not
// yet forgotten the credential, and answers as soon as it has — with no
// wait for the bound when all confirm.
func TestAClosingAnswersOnceEveryReplicaDroppedTheCredential(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b", "c")
		settle()
		release := rs["c"].cache.stick()

		done := closeAsync(rs["a"], "ann", "tok-1")
		time.Sleep(replicas.CloseAckWithin / 2)
		synctest.Wait()
		select {
		case took := <-done:
			t.Fatalf("the closing answered after %v while c had not forgotten the token", took)
		default:
		}
		if got := rs["b"].cache.log(); !slices.Equal(got, []string{"ann/tok-1"}) {
			t.Fatalf("b forgot %v", got)
		}

		release()
		synctest.Wait()
		select {
		case took := <-done:
			if took != replicas.CloseAckWithin/2 {
				t.Fatalf("the closing answered after %v, want as soon as c confirmed (%v)", took, replicas.CloseAckWithin/2)
			}
		default:
			t.Fatal("the closing did not answer once every replica confirmed")
		}
		if got := rs["c"].cache.log(); !slices.Equal(got, []string{"ann/tok-1"}) {
			t.Fatalf("c forgot %v", got)
		}

		// All answering at once: the closing waits for nothing more.
		if took := <-closeAsync(rs["a"], "bob", "tok-2"); took != 0 {
			t.Fatalf("a closing every replica confirmed at once took %v", took)
		}
	})
}

// TestAReplicaThatDoesNotConfirmStopsTrustingItsCache holds the fallback:
// a closing gives up on a replica that does not confirm after
// CloseAckWithin, and by then that replica (its listener stuck, so it
// hears neither the closing nor its own pings) no longer answers from
// its cache; once its listener catches up, it has forgotten the
// credential and trusts its cache again.
func TestAReplicaThatDoesNotConfirmStopsTrustingItsCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		settle()
		if !rs["b"].link.CacheTrusted() {
			t.Fatal("b, hearing its pings, does not trust its cache")
		}
		release := rs["b"].cache.stick()

		took := <-closeAsync(rs["a"], "ann", "tok-1")
		if took != replicas.CloseAckWithin {
			t.Fatalf("the closing answered after %v, want the bound %v", took, replicas.CloseAckWithin)
		}
		if rs["b"].link.CacheTrusted() {
			t.Fatal("b trusts its cache when the closing answers, though it has not heard it")
		}
		if !rs["a"].link.CacheTrusted() {
			t.Fatal("a, hearing its pings, stopped trusting its cache")
		}
		if !strings.Contains(rs["a"].log.String(), "replicas did not confirm") || !strings.Contains(rs["a"].log.String(), "b") {
			t.Errorf("a's log does not name b: %q", rs["a"].log.String())
		}

		release()
		synctest.Wait()
		if got := rs["b"].cache.log(); !slices.Equal(got, []string{"ann/tok-1"}) {
			t.Fatalf("b forgot %v once its listener caught up", got)
		}
		time.Sleep(replicas.PingEvery)
		synctest.Wait()
		if !rs["b"].link.CacheTrusted() {
			t.Fatal("b does not trust its cache again once it hears its pings")
		}
	})
}

// TestAReplicaTrustsItsCacheOnlyWhileItHearsItself holds the fence on one
// replica: not before its first ping comes back, yes while they do, no
// from CacheTrustFor after the last one it heard was sent.
func TestAReplicaTrustsItsCacheOnlyWhileItHearsItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		net := &network{}
		c := &cache{}
		link := replicas.New("a", port{net: net, name: "a"}, &porttest.IDs{}, slog.New(slog.DiscardHandler))
		if link.CacheTrusted() {
			t.Fatal("a replica not listening trusts its cache")
		}
		go link.Listen(ctx, replicas.Deliveries{Credentials: c})
		settle()
		if !link.CacheTrusted() {
			t.Fatal("a replica that heard its own ping does not trust its cache")
		}
		time.Sleep(10 * replicas.PingEvery)
		synctest.Wait()
		if !link.CacheTrusted() {
			t.Fatal("a replica hearing its pings stopped trusting its cache")
		}

		release := c.stick()
		net.reconnect() // the listener sticks at the ForgetAll it brings
		synctest.Wait()
		time.Sleep(replicas.CacheTrustFor - time.Nanosecond)
		if !link.CacheTrusted() {
			t.Fatal("the cache was distrusted before CacheTrustFor passed")
		}
		time.Sleep(time.Nanosecond)
		if link.CacheTrusted() {
			t.Fatal("a replica that has not heard itself for CacheTrustFor trusts its cache")
		}
		release()
		synctest.Wait()
		if !link.CacheTrusted() {
			t.Fatal("a replica that caught up does not trust its cache")
		}
		if got := c.log(); !slices.Equal(got, []string{"*"}) {
			t.Fatalf("on reconnecting the cache forgot %v, want everything", got)
		}
	})
}

// TestAClosingRightAfterAReconnectWaitsOutTheMissedPings holds that a
// replica whose listener has just (re)connected, and so may have missed
// the last pings of replicas it should wait for, does not answer a
// closing before CacheTrustFor after it connected, though every replica
// it knows confirmed; later closings do not wait.
func TestAClosingRightAfterAReconnectWaitsOutTheMissedPings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		settle()
		rs["a"].net.reconnect()
		synctest.Wait()
		time.Sleep(replicas.PingEvery)
		if took := <-closeAsync(rs["a"], "ann", "tok-1"); took != replicas.CacheTrustFor-replicas.PingEvery {
			t.Fatalf("a closing right after a reconnect answered after %v, want %v", took, replicas.CacheTrustFor-replicas.PingEvery)
		}
		if took := <-closeAsync(rs["a"], "ann", "tok-2"); took != 0 {
			t.Fatalf("a closing well after the reconnect took %v", took)
		}
	})
}

// TestAClosingNeverHeardBackGivesUp holds the last bound: when the
// backplane does not carry this replica's messages, a closing answers
// after CloseHeardWithin and says so in the log.
func TestAClosingNeverHeardBackGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &porttest.Buffer{}
		link := replicas.New("a", mute{}, &porttest.IDs{}, slog.New(slog.NewTextHandler(log, nil)))
		began := time.Now()
		link.Streams(&streams{}).CloseUser("ann", "disabled")
		if took := time.Since(began); took != replicas.CloseHeardWithin {
			t.Fatalf("the closing answered after %v, want %v", took, replicas.CloseHeardWithin)
		}
		if !strings.Contains(log.String(), "not heard back") {
			t.Fatalf("the log: %q", log.String())
		}
	})
}

// mute is a backplane that carries nothing.
type mute struct{}

func (mute) Publish([]byte)                                           {}
func (mute) Listen(ctx context.Context, _ func([]byte), _ func(bool)) { <-ctx.Done() }
func (mute) Close()                                                   {}

// BenchmarkCacheTrusted measures what the fence adds to every request
// answered from the token cache.
//
//	go test -run '^$' -bench CacheTrusted ./core/replicas
func BenchmarkCacheTrusted(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	link := replicas.New("a", port{net: &network{}, name: "a"}, &porttest.IDs{}, slog.New(slog.DiscardHandler))
	go link.Listen(ctx, replicas.Deliveries{})
	for !link.CacheTrusted() {
		time.Sleep(10 * time.Millisecond)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			link.CacheTrusted()
		}
	})
}

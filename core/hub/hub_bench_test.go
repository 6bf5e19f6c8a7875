package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// BenchmarkHubFanOut streams 100 concurrent runs of 1,000 deltas each to 10
// subscribers per run at the default buffers, and reports delivered events
// per second, the p99 publish→receive latency and how many gaps occurred:
// "burst" publishes as fast as the publishers can (a throughput ceiling),
// "paced" one delta per millisecond per run (a fast model, 100 at once).
//
//	go test -run '^$' -bench HubFanOut ./core/runs
func BenchmarkHubFanOut(b *testing.B) {
	b.Run("burst", func(b *testing.B) { fanOut(b, 0) })
	b.Run("paced-1ms", func(b *testing.B) { fanOut(b, time.Millisecond) })
}

func fanOut(b *testing.B, pace time.Duration) {
	const runs, subs, deltas = 100, 10, 1000
	for b.Loop() {
		h := New(Options{}, ports.SystemClock, nil, nil)
		published := make([][]atomic.Int64, runs) // per run, publish time by seq
		for i := range published {
			published[i] = make([]atomic.Int64, deltas+3)
		}
		var gaps, delivered atomic.Int64
		latencies := make([][]time.Duration, runs*subs)
		var readers sync.WaitGroup
		for r := 0; r < runs; r++ {
			id := fmt.Sprint("run-", r)
			h.Claim("session-"+id, id, "owner")
			for s := 0; s < subs; s++ {
				sub, _ := h.Subscribe(id, 0)
				slot := r*subs + s
				readers.Add(1)
				go func() {
					defer readers.Done()
					lat := make([]time.Duration, 0, deltas+2)
					for {
						ev, err := sub.Next(context.Background())
						if errors.Is(err, io.EOF) {
							break
						}
						if ev.Type == domain.EventGap {
							gaps.Add(1)
							continue
						}
						lat = append(lat, time.Duration(time.Now().UnixNano()-published[slot/subs][ev.Seq].Load()))
						delivered.Add(1)
					}
					latencies[slot] = lat
				}()
			}
		}
		start := time.Now()
		var writers sync.WaitGroup
		for r := 0; r < runs; r++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				id := fmt.Sprint("run-", r)
				pub := func(ev domain.Event, seq int) {
					published[r][seq].Store(time.Now().UnixNano())
					h.Publish(id, ev)
				}
				pub(domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: id}), 1)
				next := time.Now()
				for i := 0; i < deltas; i++ {
					if pace > 0 {
						next = next.Add(pace)
						time.Sleep(time.Until(next))
					}
					pub(domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: id, Delta: "token "}), i+2)
				}
				pub(domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: id, FinalOutput: "done"}), deltas+2)
			}()
		}
		writers.Wait()
		readers.Wait()
		elapsed := time.Since(start)
		var all []time.Duration
		for _, l := range latencies {
			all = append(all, l...)
		}
		slices.Sort(all)
		b.ReportMetric(float64(delivered.Load())/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(gaps.Load()), "gaps")
	}
}

// BenchmarkRetainedRun measures what a finished run of 1,000 one-token
// deltas costs the hub while it is kept for replay (the retention): the
// live heap after a GC, per run, over 200 of them.
//
//	go test -run '^$' -bench RetainedRun ./core/hub
func BenchmarkRetainedRun(b *testing.B) {
	const runs, deltas = 200, 1000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := New(Options{}, ports.SystemClock, nil, nil)
		for r := 0; r < runs; r++ {
			id := fmt.Sprint("run-", r)
			h.Claim("session-"+id, id, "owner")
			h.Publish(id, domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: id}))
			for i := 0; i < deltas; i++ {
				h.Publish(id, domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: id, Delta: "token "}))
			}
			h.Publish(id, domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: id, FinalOutput: "done"}))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/runs/1024, "KB/run")
		runtime.KeepAlive(h)
	}
}

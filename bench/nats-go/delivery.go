package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// What one subscriber saw.
type seen struct {
	probed   atomic.Bool
	received atomic.Int64
	last     atomic.Int64 // UnixNano of the last message
}

// The subject the publisher probes on until every subscription reached its server.
const probe = "bench.probe"

// delivery runs pubsub and fanout: one publisher and -subs subscribers, each on a connection
// of its own; delivered msgs/s of the slowest subscriber, from the first publish until it
// received its last message.
func delivery(o options) map[string]any {
	results := make([]*seen, o.subs)
	var publishedAt atomic.Pointer[time.Time]
	var wg sync.WaitGroup
	conns := []*nats.Conn{}
	for i := range results {
		r := &seen{}
		results[i] = r
		nc := connect(o.subURL, fmt.Sprintf("bench-sub-%d", i))
		conns = append(conns, nc)
		// An asynchronous subscription with nats.go's default pending limits, as most users run.
		_, err := nc.Subscribe(subject, func(*nats.Msg) {
			r.received.Add(1)
			r.last.Store(time.Now().UnixNano())
		})
		check(err)
		// Subscribed after the bench subject: once a probe arrives here, the publisher's
		// server has this connection's interest in both (a route passes them on in order).
		_, err = nc.Subscribe(probe, func(*nats.Msg) { r.probed.Store(true) })
		check(err)
		check(nc.Flush())
		wg.Add(1)
		go func() {
			defer wg.Done()
			waitDone(r, o, &publishedAt)
		}()
	}
	pub := connect(o.pubURL, "bench-pub")
	// Wait until every subscription reached the publisher's server (NATS propagates
	// interest across a cluster asynchronously), probing on another subject.
	deadline := time.Now().Add(10 * time.Second)
	for !allProbed(results) {
		if time.Now().After(deadline) {
			check(fmt.Errorf("the subscriptions did not reach %s in 10 s", o.pubURL))
		}
		check(pub.Publish(probe, nil))
		check(pub.Flush())
		time.Sleep(10 * time.Millisecond)
	}
	payload := newPayload(o.size)
	start := time.Now()
	for i := 0; i < o.count; i++ {
		stamp(payload)
		check(pub.Publish(subject, payload))
	}
	check(pub.Flush())
	publisherRate := float64(o.count) / time.Since(start).Seconds()
	done := time.Now()
	publishedAt.Store(&done)
	wg.Wait()
	slowest := -1.0
	fast := []map[string]any{}
	for _, r := range results {
		received := r.received.Load()
		rate := 0.0
		if received > 0 {
			rate = float64(received) / time.Unix(0, r.last.Load()).Sub(start).Seconds()
		}
		if slowest < 0 || rate < slowest {
			slowest = rate
		}
		fast = append(fast, map[string]any{"received": received, "lost": int64(o.count) - received, "messages_per_second": rate})
	}
	pub.Close()
	for _, nc := range conns {
		nc.Close()
	}
	return map[string]any{"subscribers": o.subs, "fast": fast, "slow": nil,
		"min_fast_messages_per_second": slowest, "publisher_messages_per_second": publisherRate}
}

// waitDone returns once r received every message, or -quiet after both the publisher's
// end and r's last message (nats.go drops what a slow subscriber cannot hold, unannounced).
func waitDone(r *seen, o options, publishedAt *atomic.Pointer[time.Time]) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for now := range tick.C {
		if r.received.Load() == int64(o.count) {
			return
		}
		done := publishedAt.Load()
		if done == nil {
			continue
		}
		last := *done
		if t := time.Unix(0, r.last.Load()); t.After(last) {
			last = t
		}
		if now.Sub(last) > o.quiet {
			return
		}
	}
}

func allProbed(results []*seen) bool {
	for _, r := range results {
		if !r.probed.Load() {
			return false
		}
	}
	return true
}

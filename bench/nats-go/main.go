// Command nats-across measures NATS core delivery with nats.go, the client NATS users run:
// one publisher and -subs subscribers, the publisher on -pub and the subscribers on -sub
// (another member of a NATS cluster, or the same server). It prints one JSON line in the
// shape of `herald bench pubsub|fanout --json`: delivered msgs/s of the slowest subscriber,
// from the first publish until it received its last message.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

type result struct {
	probed   atomic.Bool
	received atomic.Int64
	last     atomic.Int64 // UnixNano of the last message
}

func main() {
	pubURL := flag.String("pub", "nats://127.0.0.1:4222", "server the publisher connects to")
	subURL := flag.String("sub", "", "server the subscribers connect to (default: -pub)")
	count := flag.Int("n", 1000000, "messages to publish")
	size := flag.Int("size", 128, "payload bytes")
	subs := flag.Int("subs", 1, "subscribers")
	quiet := flag.Duration("quiet", 2*time.Second, "a subscriber is done this long after its last message, once the publisher is")
	flag.Parse()
	if *subURL == "" {
		*subURL = *pubURL
	}
	const subject, probe = "bench.across", "bench.probe"
	results := make([]*result, *subs)
	var publishedAt atomic.Pointer[time.Time]
	var wg sync.WaitGroup
	conns := []*nats.Conn{}
	for i := range results {
		r := &result{}
		results[i] = r
		nc, err := nats.Connect(*subURL, nats.Name(fmt.Sprintf("bench-sub-%d", i)))
		check(err)
		conns = append(conns, nc)
		// An asynchronous subscription with nats.go's default pending limits, as most users run.
		_, err = nc.Subscribe(subject, func(*nats.Msg) {
			r.received.Add(1)
			r.last.Store(time.Now().UnixNano())
		})
		check(err)
		// Subscribed after the bench subject: once a probe arrives here, the far member has
		// this connection's interest in both (a route passes them on in order).
		_, err = nc.Subscribe(probe, func(*nats.Msg) { r.probed.Store(true) })
		check(err)
		check(nc.Flush())
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for now := range tick.C {
				if r.received.Load() == int64(*count) {
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
				if now.Sub(last) > *quiet {
					return
				}
			}
		}()
	}
	pub, err := nats.Connect(*pubURL, nats.Name("bench-pub"))
	check(err)
	// Wait until every subscription reached the publisher's member (NATS propagates
	// interest asynchronously), probing on another subject.
	deadline := time.Now().Add(10 * time.Second)
	for !allProbed(results) {
		if time.Now().After(deadline) {
			check(fmt.Errorf("the subscriptions did not reach %s in 10 s", *pubURL))
		}
		check(pub.Publish(probe, nil))
		check(pub.Flush())
		time.Sleep(10 * time.Millisecond)
	}
	payload := []byte(strings.Repeat("x", *size))
	start := time.Now()
	for i := 0; i < *count; i++ {
		check(pub.Publish(subject, payload))
	}
	check(pub.Flush())
	publisherRate := float64(*count) / time.Since(start).Seconds()
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
		fast = append(fast, map[string]any{"received": received, "lost": int64(*count) - received, "messages_per_second": rate})
	}
	scenario := "pubsub"
	if *subs > 1 {
		scenario = "fanout"
	}
	out := map[string]any{"system": "nats (nats.go)", "scenario": scenario, "messages": *count, "size": *size,
		"subscribers": *subs, "fast": fast, "min_fast_messages_per_second": slowest,
		"publisher_messages_per_second": publisherRate}
	check(json.NewEncoder(os.Stdout).Encode(out))
	pub.Close()
	for _, nc := range conns {
		nc.Close()
	}
}

func allProbed(results []*result) bool {
	for _, r := range results {
		if !r.probed.Load() {
			return false
		}
	}
	return true
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats-across:", err)
		os.Exit(1)
	}
}

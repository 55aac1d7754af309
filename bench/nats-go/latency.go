package main

import (
	"math"
	"slices"
	"time"
)

// latency runs latency: one subscriber, messages published at -rate msgs/s; end-to-end
// latency from the send time each message carries, as crates/herald-bench measures it.
func latency(o options) map[string]any {
	sub := connect(o.subURL, "bench-sub")
	defer sub.Close()
	subscription, err := sub.SubscribeSync(subject)
	check(err)
	check(sub.Flush())
	pub := connect(o.pubURL, "bench-pub")
	defer pub.Close()
	received := make(chan []int64)
	go func() {
		latencies := make([]int64, 0, o.count)
		for len(latencies) < o.count {
			message, err := subscription.NextMsg(stallTimeout)
			if err != nil {
				break
			}
			if sent, ok := sentAt(message.Data); ok {
				latencies = append(latencies, max(0, time.Since(sent).Nanoseconds()))
			}
		}
		received <- latencies
	}()
	// Send in steps of 1 ms so the rate holds without a timer per message.
	payload := newPayload(o.size)
	perStep := max(o.rate/1000, 1)
	start := time.Now()
	for sent := 0; sent < o.count; {
		due := (time.Since(start).Seconds()*1000 + 1) * perStep
		for float64(sent) < due && sent < o.count {
			stamp(payload)
			check(pub.Publish(subject, payload))
			sent++
		}
		time.Sleep(time.Millisecond)
	}
	check(pub.Flush())
	latencies := <-received
	slices.Sort(latencies)
	us := func(q float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		index := int(math.Round(float64(len(latencies)-1) * q))
		return float64(latencies[index]) / 1000
	}
	return map[string]any{"rate": o.rate, "received": len(latencies), "lost": o.count - len(latencies),
		"p50_us": us(0.5), "p99_us": us(0.99), "p999_us": us(0.999), "max_us": us(1)}
}

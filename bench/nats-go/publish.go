package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publish runs pub: msgs/s into the server, no subscriber; timed until the server answered a
// PING sent after the last message (nats.go's Flush), so it has processed them all.
func publish(o options) map[string]any {
	nc := connect(o.pubURL, "bench-pub")
	defer nc.Close()
	payload := newPayload(o.size)
	start := time.Now()
	for i := 0; i < o.count; i++ {
		stamp(payload)
		check(nc.Publish(subject, payload))
	}
	check(nc.Flush())
	seconds := time.Since(start).Seconds()
	return map[string]any{"seconds": seconds, "messages_per_second": float64(o.count) / seconds}
}

// The characters of a JetStream payload's random part: 6 bits each, as Herald's
// `pub --ack stored` texts (crates/herald-bench/src/stored.rs).
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// publishJetStream runs pub -jetstream: msgs/s into a stream with file storage, timed until
// the server acknowledged every message as stored. The count of acknowledged messages and
// what the stream gained are both reported: they must equal -n. After its stamp, each
// payload is random, so its bytes on disk compare with Herald's compressed archive fairly.
func publishJetStream(o options) map[string]any {
	nc := connect(o.pubURL, "bench-pub-jetstream")
	defer nc.Close()
	var failed atomic.Int64
	var firstError atomic.Value
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(o.inFlight),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			failed.Add(1)
			firstError.CompareAndSwap(nil, err.Error())
		}))
	check(err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: o.stream, Subjects: []string{subject}, Storage: jetstream.FileStorage})
	check(err)
	before, err := stream.Info(ctx)
	check(err)
	start := time.Now()
	for i := 0; i < o.count; i++ {
		// A message of its own each: nats.go keeps it until acknowledged, to publish again.
		payload := newPayload(o.size)
		for j := 8; j < len(payload); j++ {
			payload[j] = alphabet[rand.Uint64()>>58]
		}
		stamp(payload)
		// With -in-flight unacknowledged, PublishAsync waits for room, here up to the stall
		// timeout rather than nats.go's 200 ms.
		_, err := js.PublishAsync(subject, payload, jetstream.WithStallWait(stallTimeout))
		check(err)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		check(errors.New("JetStream did not acknowledge every message within a minute"))
	}
	seconds := time.Since(start).Seconds()
	after, err := stream.Info(ctx)
	check(err)
	acknowledged := int64(o.count) - failed.Load()
	out := map[string]any{"system": "nats jetstream (nats.go)", "ack": "stored", "in_flight": o.inFlight,
		"seconds": seconds, "messages_per_second": float64(acknowledged) / seconds,
		"acknowledged": acknowledged, "stored": after.State.Msgs - before.State.Msgs}
	if message := firstError.Load(); message != nil {
		out["first_error"] = message
	}
	return out
}

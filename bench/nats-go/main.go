// Command nats-bench measures NATS with nats.go, the client NATS users run, and prints one
// JSON line in the shape `herald bench <scenario> --json` prints, so the bench scripts read
// Herald's and NATS's results the same way.
//
//	nats-bench -scenario pub     -pub nats://127.0.0.1:4222 -n 1000000 -size 128
//	nats-bench -scenario pubsub  ...            1 publisher → 1 subscriber, delivered msgs/s
//	nats-bench -scenario fanout  -subs 10 ...   1 → 10, the slowest subscriber
//	nats-bench -scenario latency -rate 10000 ...
//	nats-bench -scenario pub -jetstream -in-flight 4000 ...
//
// Without -scenario it runs pubsub (one subscriber) or fanout (-subs above 1), as
// bench/cluster-nats.sh uses it: the publisher on -pub, the subscribers on -sub (another
// member of a NATS cluster, or the same server).
//
// Every payload is -size bytes whose first 8 are the send time in ns since the epoch,
// big-endian, as crates/herald-bench/src/payload.rs stamps the Rust peers' payloads.
//
// With -jetstream, `pub` publishes into a stream with file storage on the subject
// (created if missing) with PublishAsync, at most -in-flight messages unacknowledged, and is
// timed until the server acknowledged every message as stored.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

// Subject every scenario publishes on, as crates/herald-bench's SUBJECT.
const subject = "bench.pub"

// How long a scenario waits without progress before it reports what it has, as
// crates/herald-bench's STALL_TIMEOUT.
const stallTimeout = 10 * time.Second

type options struct {
	pubURL, subURL string
	scenario       string
	count, size    int
	subs           int
	quiet          time.Duration
	rate           float64
	jetstream      bool
	inFlight       int
	stream         string
}

func main() {
	var o options
	flag.StringVar(&o.pubURL, "pub", "nats://127.0.0.1:4222", "server the publisher connects to")
	flag.StringVar(&o.subURL, "sub", "", "server the subscribers connect to (default: -pub)")
	flag.StringVar(&o.scenario, "scenario", "", "pub, pubsub, fanout or latency (default: pubsub, or fanout with -subs above 1)")
	flag.IntVar(&o.count, "n", 1000000, "messages to publish")
	flag.IntVar(&o.size, "size", 128, "payload bytes (at least 8)")
	flag.IntVar(&o.subs, "subs", 1, "subscribers for fanout")
	flag.DurationVar(&o.quiet, "quiet", 2*time.Second, "a subscriber is done this long after its last message, once the publisher is")
	flag.Float64Var(&o.rate, "rate", 10000, "messages per second for latency")
	flag.BoolVar(&o.jetstream, "jetstream", false, "pub: publish into a JetStream stream with file storage, acknowledged when stored")
	flag.IntVar(&o.inFlight, "in-flight", 4000, "pub -jetstream: messages published and not yet acknowledged, at most")
	flag.StringVar(&o.stream, "stream", "BENCH", "pub -jetstream: the stream's name")
	flag.Parse()
	if o.subURL == "" {
		o.subURL = o.pubURL
	}
	if o.scenario == "" {
		o.scenario = "pubsub"
		if o.subs > 1 {
			o.scenario = "fanout"
		}
	}
	if o.jetstream && o.scenario != "pub" {
		check(fmt.Errorf("-jetstream is for -scenario pub only"))
	}
	var out map[string]any
	switch o.scenario {
	case "pub":
		if o.jetstream {
			out = publishJetStream(o)
		} else {
			out = publish(o)
		}
	case "pubsub":
		o.subs = 1
		out = delivery(o)
	case "fanout":
		out = delivery(o)
	case "latency":
		out = latency(o)
	default:
		check(fmt.Errorf("unknown scenario `%s` (expected pub, pubsub, fanout or latency)", o.scenario))
	}
	out["scenario"] = o.scenario
	out["size"] = o.size
	out["messages"] = o.count
	if _, named := out["system"]; !named {
		out["system"] = "nats (nats.go)"
	}
	check(json.NewEncoder(os.Stdout).Encode(out))
}

// connect connects to url under the client name name.
func connect(url, name string) *nats.Conn {
	nc, err := nats.Connect(url, nats.Name(name))
	check(err)
	return nc
}

// newPayload returns a payload of size bytes (at least 8) filled with 'x'.
func newPayload(size int) []byte {
	payload := make([]byte, max(size, 8))
	for i := range payload {
		payload[i] = 'x'
	}
	return payload
}

// stamp writes the send time, now, into the payload's first 8 bytes.
func stamp(payload []byte) {
	binary.BigEndian.PutUint64(payload, uint64(time.Now().UnixNano()))
}

// sentAt returns the send time a payload carries, or false if it is too short.
func sentAt(payload []byte) (time.Time, bool) {
	if len(payload) < 8 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(payload))), true
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats-bench:", err)
		os.Exit(1)
	}
}

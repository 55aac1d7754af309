//! `pub` with `--ack stored`: records/s into the server, timed until the archive has every
//! record durably and said so. The counterpart of a JetStream publish acknowledged when
//! stored (bench/nats-go `-jetstream`), with a bounded number of records in flight as
//! nats.go's `PublishAsyncMaxPending`.
//!
//! The client asks for a `stored` acknowledgement once per window of records, on a task of
//! its own so publishing goes on meanwhile; at most [`WINDOWS_IN_FLIGHT`] windows wait for
//! theirs. The server makes a window durable before it answers (`archive.fsync = "stored"`,
//! the default), so each acknowledgement covers every record published before it.
//!
//! Each record's text is different and random (letters, digits, `+` and `/`, as
//! bench/nats-go's JetStream payloads): the archive compresses its blocks, and a filler
//! repeated in every record would make its bytes on disk per record a compression artefact.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use herald_proto::AckLevel;
use serde_json::json;

use crate::archive::archive_counter;
use crate::herald::{bench_record, connect, Herald};
use crate::report::Report;
use crate::scenarios::SUBJECT;

/// Records in flight (published, not yet acknowledged stored) unless told otherwise: what
/// bench/compare.sh gives JetStream's `PublishAsyncMaxPending` too.
pub const DEFAULT_IN_FLIGHT: u64 = 4_000;
/// Windows of records whose `stored` acknowledgement may be outstanding at once.
pub const WINDOWS_IN_FLIGHT: u64 = 4;
/// Longest one window's acknowledgement may take.
const ACK_TIMEOUT: Duration = Duration::from_secs(60);
/// The characters of the random text: 6 bits each.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Publishes `count` records of `size` bytes of text to `herald`, each acknowledged stored,
/// with at most `in_flight` records unacknowledged.
///
/// # Errors
/// The client's or the server's error, e.g. `stored` refused by a server without an archive.
pub async fn publish_stored(
    herald: &Herald,
    count: u64,
    size: usize,
    in_flight: u64,
) -> anyhow::Result<Report> {
    let client = connect(&herald.url, "bench-pub-stored").await?;
    let dropped_before = archive_counter(&client, "dropped").await?;
    let mut record = bench_record(SUBJECT, size);
    let window = (in_flight / WINDOWS_IN_FLIGHT).max(1);
    let mut random = herald_proto::time::now_nanos() as u64 | 1;
    let mut waiting = VecDeque::new();
    let start = Instant::now();
    for sent in 1..=count {
        record.time = herald_proto::time::now_nanos();
        random_text(&mut record.text, size, &mut random);
        client.publish(&record).await?;
        if sent % window != 0 && sent != count {
            continue;
        }
        let acknowledging = client.clone();
        waiting.push_back(tokio::spawn(async move {
            acknowledging.flush_at(AckLevel::Stored, ACK_TIMEOUT).await
        }));
        // The next window may start only while the ones before it leave room for it.
        if waiting.len() as u64 >= WINDOWS_IN_FLIGHT {
            if let Some(oldest) = waiting.pop_front() {
                oldest.await??;
            }
        }
    }
    for acknowledged in waiting {
        acknowledged.await??;
    }
    let seconds = start.elapsed().as_secs_f64();
    let dropped = archive_counter(&client, "dropped").await? - dropped_before;
    let rate = count as f64 / seconds;
    Ok(Report {
        lines: vec![format!(
            "herald pub, acknowledged stored: {count} × {size} B in {seconds:.3} s: {rate:.0} msg/s, at most {in_flight} in flight; archive dropped {dropped}"
        )],
        json: json!({"system": "herald", "scenario": "pub", "ack": "stored", "size": size,
                     "messages": count, "in_flight": in_flight, "seconds": seconds,
                     "messages_per_second": rate, "archive_dropped": dropped}),
    })
}

/// Replaces `text` with `size` characters of [`ALPHABET`] drawn with xorshift64 from `state`
/// (never 0).
fn random_text(text: &mut String, size: usize, state: &mut u64) {
    text.clear();
    for _ in 0..size {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        text.push(char::from(ALPHABET[(*state >> 58) as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_text_has_the_size_and_differs_each_time() {
        let (mut first, mut second, mut state) = (String::new(), String::new(), 1);
        random_text(&mut first, 128, &mut state);
        random_text(&mut second, 128, &mut state);
        assert_eq!((first.len(), second.len()), (128, 128));
        assert_ne!(first, second);
        assert!(first.bytes().all(|b| ALPHABET.contains(&b)));
    }
}

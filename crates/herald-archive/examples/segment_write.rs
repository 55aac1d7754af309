//! How fast the segment format takes records on one core, and how small it keeps them:
//! `cargo run --release -p herald-archive --example segment_write [RECORDS]`.
//!
//! Log records shaped like the demo facility's (200 subjects, templated texts with numbers,
//! host, process, thread, source line, a field or two) are made first; then, timed, each is
//! put into a block (64 KiB before compression), each full block compressed (lz4, or not
//! at all) and appended to a segment file, which is synced at the end. Prints records/s,
//! MB/s of records and bytes on disk per record for each codec.

use std::time::Instant;

use herald_archive::segment::{BlockBuilder, Codec, SegmentWriter};

#[path = "common/demo_logs.rs"]
mod demo_logs;

const BLOCK_RAW_BYTES: usize = 64 * 1024;

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map_or(2_000_000, |n| n.parse().expect("a count"));
    let entries = demo_logs::records(count, 250_000);
    let raw: usize = entries.iter().map(|e| e.record.bytes.len()).sum();
    println!(
        "{count} log records, {:.1} B each as received",
        raw as f64 / count as f64
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    for codec in [Codec::Lz4, Codec::None] {
        let path = dir.path().join(format!("{codec:?}.seg"));
        let start = Instant::now();
        let (mut writer, _) = SegmentWriter::open(&path).expect("a segment");
        let mut builder = BlockBuilder::new();
        for entry in &entries {
            builder.push(entry);
            if builder.raw_len() >= BLOCK_RAW_BYTES {
                writer.append(&builder.finish(codec).1).expect("appended");
            }
        }
        if !builder.is_empty() {
            writer.append(&builder.finish(codec).1).expect("appended");
        }
        writer.sync().expect("synced");
        let seconds = start.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&path).expect("the file").len();
        println!(
            "{codec:?}: {:.2} M records/s, {:.0} MB/s of records, {:.1} B per record on disk",
            count as f64 / seconds / 1e6,
            raw as f64 / seconds / 1e6,
            bytes as f64 / count as f64
        );
    }
}

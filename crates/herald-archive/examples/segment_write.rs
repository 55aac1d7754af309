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
use herald_archive::{Entry, Keep};
use herald_proto::frame::RawRecord;
use herald_proto::value::Value;
use herald_proto::{Kind, Origin, Priority, Record};

const BLOCK_RAW_BYTES: usize = 64 * 1024;

fn records(count: usize) -> Vec<Entry> {
    let texts = [
        "encoder step of {} counts exceeds the servo limit",
        "azimuth axis at {} mdeg, tracking",
        "cryostat stage 2 at {} mK",
        "correlator subscan {} done",
        "weather station wind {} km/h",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|n| {
            let r = next();
            let antenna = r % 50;
            let part = ["Mount", "Cryo", "Drive", "Corr"][(r >> 8) as usize % 4];
            let value = (r >> 16) % 100_000;
            let record = Record {
                time: 1_764_000_000_000_000_000 + n as i64 * 250_000,
                priority: if r % 97 == 0 {
                    Priority::Warning
                } else {
                    Priority::Info
                },
                text: texts[(r >> 32) as usize % texts.len()].replace("{}", &value.to_string()),
                origin: Origin {
                    host: format!("dv{antenna:02}-lcu"),
                    process: format!("{}d[{}]", part.to_lowercase(), 1000 + antenna),
                    thread: "main".to_string(),
                    file: format!("src/{}.c", part.to_lowercase()),
                    line: Some(100 + (r >> 40) % 400),
                    ..Origin::default()
                },
                fields: vec![("value".to_string(), Value::Int(value as i64))],
                ..Record::new(Kind::Log, format!("ANTENNA.DV{antenna:02}.{part}"))
            };
            Entry {
                seq: n as u64,
                received: record.time + 40_000,
                keep: Keep::days(30),
                record: RawRecord::new(record.to_bytes().into()).expect("a record"),
            }
        })
        .collect()
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map_or(2_000_000, |n| n.parse().expect("a count"));
    let entries = records(count);
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

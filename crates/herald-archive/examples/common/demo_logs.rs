//! Log records shaped like the demo facility's, for the examples: 200 subjects
//! (`ANTENNA.DVnn.<part>`), templated texts with numbers, host, process, thread, source line
//! and a field; one in 97 a WARNING, the rest INFO; `step` nanoseconds apart from
//! 2025-11-24T16:00:00Z.

use herald_archive::{Entry, Keep};
use herald_proto::frame::RawRecord;
use herald_proto::value::Value;
use herald_proto::{Kind, Origin, Priority, Record};

/// The first record's time.
pub const START: i64 = 1_764_000_000_000_000_000;

/// Returns `count` records, `step` ns apart.
pub fn records(count: usize, step: i64) -> Vec<Entry> {
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
                time: START + n as i64 * step,
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

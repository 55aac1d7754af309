//! The record checks a server makes on every published record (`RecordMeta::scan`), on
//! records shaped as `herald bench pub` sends them: a log record with type, origin (host,
//! process, thread) and 128 bytes of text.
//!
//!     cargo bench -p herald-proto --bench scan

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use herald_proto::msgpack::Reader;
use herald_proto::origin::Origin;
use herald_proto::record::RecordMeta;
use herald_proto::{Kind, Priority, Record};

fn records(count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for n in 0..count {
        let record = Record {
            type_name: "bench".into(),
            priority: Priority::Info,
            time: 1_763_604_000_000_000_000 + n as i64,
            origin: Origin {
                host: "vm".into(),
                process: "herald".into(),
                thread: "tokio-runtime-worker".into(),
                ..Origin::default()
            },
            text: format!("{n:016x}{}", "x".repeat(112)),
            ..Record::new(Kind::Log, "bench.pub")
        };
        record.encode(&mut out);
    }
    out
}

fn scan(c: &mut Criterion) {
    const COUNT: usize = 1_000;
    let batch = records(COUNT);
    let mut group = c.benchmark_group("scan");
    group.throughput(Throughput::Elements(COUNT as u64));
    group.bench_function("bench_pub_records", |b| {
        b.iter(|| {
            let mut reader = Reader::new(&batch);
            for _ in 0..COUNT {
                let start = reader.position();
                let meta = RecordMeta::scan(&mut reader, start).expect("valid");
                std::hint::black_box(meta);
            }
        });
    });
    group.finish();
}

criterion_group!(benches, scan);
criterion_main!(benches);

//! The archive writer's work on every record it keeps (`BlockBuilder::push` and
//! `BlockBuilder::finish`, which compresses the block with LZ4), on records shaped as
//! `herald bench pub` sends them: a log record with type, origin (host, process, thread) and
//! 128 bytes of text that starts with the record's number, a block's worth at a time.
//!
//!     cargo bench -p herald-archive --bench block

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use herald_archive::entry::Entry;
use herald_archive::keep::Keep;
use herald_archive::segment::{BlockBuilder, Codec};
use herald_proto::frame::RawRecord;
use herald_proto::origin::Origin;
use herald_proto::{Kind, Priority, Record};

/// About what fills a block (256 KiB before compression) of these records.
const COUNT: usize = 1_250;

fn entries() -> Vec<Entry> {
    let mut record = Record {
        type_name: "bench".into(),
        priority: Priority::Info,
        time: 1_763_604_000_000_000_000,
        origin: Origin {
            host: "vm".into(),
            process: "herald[27176]".into(),
            thread: "main".into(),
            ..Origin::default()
        },
        ..Record::new(Kind::Log, "bench.pub")
    };
    (0..COUNT)
        .map(|n| {
            record.time += 430;
            record.text = format!("{n:016x}{}", "x".repeat(112));
            Entry {
                seq: 1_000 + n as u64,
                received: record.time + 20_000 + (n as i64 % 7) * 100,
                keep: Keep::days(30),
                record: RawRecord::from_record(&record).expect("a valid record"),
            }
        })
        .collect()
}

fn block(c: &mut Criterion) {
    let entries = entries();
    let mut builder = BlockBuilder::new();
    let mut group = c.benchmark_group("block");
    group.throughput(Throughput::Elements(COUNT as u64));
    group.bench_function("push", |b| {
        b.iter(|| {
            for entry in &entries {
                builder.push(entry);
            }
            std::hint::black_box(builder.raw_len());
            builder.finish(Codec::None);
        });
    });
    group.bench_function("push_and_compress", |b| {
        b.iter(|| {
            for entry in &entries {
                builder.push(entry);
            }
            std::hint::black_box(builder.finish(Codec::Lz4));
        });
    });
    group.finish();
}

criterion_group!(benches, block);
criterion_main!(benches);

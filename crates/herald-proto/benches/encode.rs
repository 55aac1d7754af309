//! Encoding records as a client does for every publish (`Record::encode`), on records shaped
//! as `herald bench pub` sends them: a log record with type, origin (host, process, thread)
//! and 128 bytes of text.
//!
//!     cargo bench -p herald-proto --bench encode

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use herald_proto::origin::Origin;
use herald_proto::{Kind, Priority, Record};

fn encode(c: &mut Criterion) {
    const COUNT: usize = 1_000;
    let mut record = Record {
        type_name: "bench".into(),
        priority: Priority::Info,
        time: 1_763_604_000_000_000_000,
        origin: Origin {
            host: "vm".into(),
            process: "herald".into(),
            thread: "tokio-runtime-worker".into(),
            ..Origin::default()
        },
        text: "x".repeat(128),
        ..Record::new(Kind::Log, "bench.pub")
    };
    let mut out = Vec::with_capacity(COUNT * 256);
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(COUNT as u64));
    group.bench_function("bench_pub_records", |b| {
        b.iter(|| {
            out.clear();
            for n in 0..COUNT {
                record.time += n as i64;
                record.encode(&mut out);
            }
            std::hint::black_box(&out);
        });
    });
    group.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);

//! The syslog listener's work on every message before routing: reading it
//! (`syslog::parse::parse`), making the record (`syslog::record::fill`) and writing it,
//! checked (`Record::encode_meta`), on 1,000 messages shaped as `herald bench syslog` sends
//! them (RFC 5424, 128 bytes of text) and on RFC 3164 lines as a BSD syslog daemon sends.
//!
//!     cargo bench -p herald-server --bench syslog

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use herald_proto::{Kind, Record};
use herald_server::syslog::{parse, record};

const COUNT: usize = 1_000;
const NOW: i64 = 1_795_000_000_000_000_000;

fn messages(rfc5424: bool) -> Vec<Vec<u8>> {
    (0..COUNT)
        .map(|i| {
            let head = if rfc5424 {
                "<14>1 2026-11-27T04:00:00.000000Z dv01 bench 4242 - - "
            } else {
                "<14>Nov 27 04:00:00 dv01 bench[4242]: "
            };
            let mut line = head.as_bytes().to_vec();
            let text = format!("message {i} ");
            line.extend(text.bytes().chain(std::iter::repeat(b'x')).take(128));
            line
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let template = record::Template::new("syslog.{host}.{app}");
    let mut group = c.benchmark_group("syslog");
    group.throughput(Throughput::Elements(COUNT as u64));
    for (name, rfc5424) in [("rfc5424", true), ("rfc3164", false)] {
        let messages = messages(rfc5424);
        let mut record = Record::new(Kind::Log, "");
        let mut encoded = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                encoded.clear();
                for bytes in &messages {
                    let message = parse::parse(bytes, NOW).expect("a message");
                    record::fill(&mut record, message, &template, NOW, "127.0.0.1");
                    record.encode_meta(&mut encoded).expect("a record");
                }
                encoded.len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! What an identity's permissions cost per record: `GlobRules::allows` for the rules a
//! restricted identity's publish check runs once per record (a prefix glob, an exact subject,
//! a general pattern, and allow-but-deny), and the routing of a 1,000-record batch to one
//! subscription open and narrowed (the narrowing is looked at once per subject, when the
//! match cache is filled, so the two should not differ), and of a batch about one subject.
//!
//! Run:
//!     cargo bench -p herald-router --bench rules

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use herald_proto::{Filter, Frame, Kind, Record};
use herald_router::{GlobRules, Queue, QueueConfig, RouteContext, Router, Subscription};

fn rules(allow: &[&str], deny: &[&str]) -> GlobRules {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    GlobRules::new(&owned(allow), &owned(deny)).expect("valid globs")
}

fn allows(c: &mut Criterion) {
    let mut group = c.benchmark_group("allows");
    let cases = [
        ("prefix", rules(&["bench.*"], &[]), "bench.pub"),
        ("exact", rules(&["bench.pub"], &[]), "bench.pub"),
        (
            "general",
            rules(&["ANTENNA.DV??.*"], &[]),
            "ANTENNA.DV01.Mount",
        ),
        (
            "allow_deny",
            rules(&["DAQ.*"], &["DAQ.Secret*"]),
            "DAQ.Readout",
        ),
        (
            "three_globs_last",
            rules(&["A.*", "B.*", "bench.*"], &[]),
            "bench.pub",
        ),
    ];
    for (name, rules, subject) in cases {
        group.bench_function(name, |b| {
            b.iter(|| black_box(&rules).allows(black_box(subject)))
        });
    }
    group.finish();
}

fn batch(count: usize, subjects: usize) -> Vec<herald_proto::frame::RawRecord> {
    let mut publish = Vec::new();
    let n = u32::try_from(count).expect("a small batch");
    herald_proto::frame::write_publish_header(&mut publish, 0, Default::default(), n);
    for i in 0..count {
        let record = Record {
            text: "x".repeat(128),
            ..Record::new(Kind::Log, format!("bench.s{}", i % subjects))
        };
        record.encode(&mut publish);
    }
    publish.insert(0, herald_proto::FrameType::Publish as u8);
    let Ok(Frame::Publish(batch)) = Frame::decode(publish.into()) else {
        panic!("a PUBLISH")
    };
    batch.records
}

fn route(c: &mut Criterion) {
    let mut group = c.benchmark_group("route_1000");
    let cases = [
        ("open", None, 16),
        ("narrowed", Some(rules(&["bench.*"], &[])), 16),
        // A producer's batch is mostly about one subject.
        ("one_subject", None, 1),
    ];
    for (name, visible, subjects) in cases {
        let records = batch(1_000, subjects);
        let router = Router::new();
        let config = QueueConfig {
            max_records: 1 << 20,
            ..QueueConfig::default()
        };
        let queue = Arc::new(Queue::new(config, Arc::default()));
        router.subscribe(Arc::new(Subscription {
            connection: 1,
            id: 1,
            filter: Filter::subject("bench.*").expect("a glob"),
            queue: Arc::clone(&queue),
            visible: visible.map(Arc::new),
            visible_info: None,
            route: false,
            group: None,
        }));
        let mut context = RouteContext::default();
        let mut drained = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                router.route(&mut context, black_box(&records), 0);
                queue.drain(&mut drained, usize::MAX);
                drained.clear();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, allows, route);
criterion_main!(benches);

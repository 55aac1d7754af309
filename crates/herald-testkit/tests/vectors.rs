//! Checks `testdata/vectors/` against herald-proto: every vector decodes to its stated
//! meaning and re-encodes to the same bytes, the files are exactly what the generator
//! writes, and every vector survives being fed to a `FrameBuffer` in two pieces (the fuzz
//! seed corpus run, as nats-server's `parser_fuzz_test.go` cuts its inputs).

use std::collections::BTreeSet;

use bytes::Bytes;
use herald_proto::archive::ArchiveReply;
use herald_proto::frame::{check_frame, DEFAULT_MAX_FRAME_BYTES, LENGTH_BYTES};
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::{Frame, Record, Value};
use herald_testkit::vectors::{self, Vector};

fn decode(vector: &Vector) -> Frame {
    let body = Bytes::copy_from_slice(&vector.bytes[LENGTH_BYTES..]);
    Frame::decode(body).unwrap_or_else(|err| panic!("{}/{}: {err}", vector.file, vector.name))
}

/// The encoded records inside a frame.
fn records(frame: &Frame) -> Vec<Bytes> {
    match frame {
        Frame::Publish(publish) => publish.records.iter().map(|r| r.bytes.clone()).collect(),
        Frame::Deliver(entries) => entries.iter().map(|e| e.record.bytes.clone()).collect(),
        Frame::QueryReply { reply, .. } => match reply {
            ArchiveReply::Page(page) => page.records.iter().map(|s| s.record.clone()).collect(),
            ArchiveReply::At(found) => found.iter().flatten().map(|s| s.record.clone()).collect(),
            ArchiveReply::Buckets(_) => Vec::new(),
        },
        _ => Vec::new(),
    }
}

#[test]
fn every_vector_decodes_to_its_meaning_and_back_to_its_bytes() {
    let all = vectors::load_all();
    assert!(all.len() >= 25, "only {} vectors found", all.len());
    for vector in &all {
        let at = format!("{}/{}", vector.file, vector.name);
        let total = check_frame(&vector.bytes, DEFAULT_MAX_FRAME_BYTES);
        assert_eq!(total, Ok(Some(vector.bytes.len())), "{at}: check_frame");
        let frame = decode(vector);
        assert_eq!(
            vectors::frame_to_json(&frame),
            vector.meaning,
            "{at}: meaning"
        );
        assert_eq!(frame.to_bytes(), vector.bytes, "{at}: re-encoding");
        for (index, bytes) in records(&frame).iter().enumerate() {
            let record = Record::from_bytes(bytes)
                .unwrap_or_else(|err| panic!("{at}: record {index}: {err}"));
            assert_eq!(record.to_bytes(), bytes.as_ref(), "{at}: record {index}");
        }
    }
}

#[test]
fn committed_files_are_what_the_generator_writes() {
    let generated = vectors::generate();
    for (name, file) in &generated {
        let path = vectors::directory().join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == vectors::render(file),
            "{} differs from the generator; run `cargo run -p herald-testkit --example \
             write_vectors` and review the diff",
            path.display()
        );
    }
    let expected: BTreeSet<&str> = generated.iter().map(|(name, _)| *name).collect();
    let found: BTreeSet<String> = vectors::load_all().into_iter().map(|v| v.file).collect();
    let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    assert_eq!(found, expected, "stray or missing vector files");
}

#[test]
fn case_names_are_unique_and_every_frame_type_is_covered() {
    let all = vectors::load_all();
    let mut names = BTreeSet::new();
    for vector in &all {
        assert!(names.insert(&vector.name), "duplicate name {}", vector.name);
    }
    let types: BTreeSet<&str> = all
        .iter()
        .filter_map(|v| v.meaning["type"].as_str())
        .collect();
    let every = [
        "HELLO",
        "WELCOME",
        "PUBLISH",
        "ACK",
        "DELIVER",
        "GAP",
        "SUBSCRIBE",
        "UNSUBSCRIBE",
        "OK",
        "MONITOR",
        "MONITOR_REPLY",
        "INFO",
        "INFO_REPLY",
        "INFO_SUBSCRIBE",
        "QUERY",
        "QUERY_REPLY",
        "PING",
        "PONG",
        "ERROR",
    ];
    for name in every {
        assert!(types.contains(name), "no vector for {name}");
    }
}

/// The files list object keys sorted (serde_json without `preserve_order`), so a reader that
/// encodes a meaning in file order only gets the vector's bytes if every map of named values
/// is in ascending order on the wire too. `{"bytes": …}` and `{"time": …}` mean typed values,
/// so no map may look like them.
#[test]
fn maps_of_named_values_are_sorted_and_unambiguous() {
    fn check(fields: &[(String, Value)], at: &str) {
        let names: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
        assert!(
            names.windows(2).all(|pair| pair[0] < pair[1]),
            "{at}: names {names:?} are not in ascending order"
        );
        assert!(
            !matches!(names.as_slice(), ["bytes" | "time" | "float"]),
            "{at}: a one-name map {names:?} reads like a typed value"
        );
        for (_, value) in fields {
            check_value(value, at);
        }
    }
    fn check_value(value: &Value, at: &str) {
        match value {
            Value::Map(fields) => check(fields, at),
            Value::Array(items) => items.iter().for_each(|item| check_value(item, at)),
            _ => {}
        }
    }
    for vector in vectors::load_all() {
        let at = format!("{}/{}", vector.file, vector.name);
        let frame = decode(&vector);
        if let Frame::MonitorReply { data, .. } = &frame {
            check(data, &at);
        }
        for bytes in records(&frame) {
            check(
                &Record::from_bytes(&bytes).expect("record decodes").fields,
                &at,
            );
        }
    }
}

/// The fuzz seed corpus run: each vector, cut in two at every position, comes out of a
/// `FrameBuffer` as exactly one frame, equal to the frame decoded in one piece.
#[test]
fn every_vector_cut_in_two_anywhere_yields_the_same_frame() {
    for vector in vectors::load_all() {
        let whole = decode(&vector);
        for cut in 0..=vector.bytes.len() {
            let mut buffer = FrameBuffer::new(DEFAULT_MAX_FRAME_BYTES);
            let mut frames = Vec::new();
            for part in [&vector.bytes[..cut], &vector.bytes[cut..]] {
                buffer.spare().extend_from_slice(part);
                while let Some(frame) = buffer.next_frame().expect("a valid frame") {
                    frames.push(Frame::decode(frame).expect("a valid frame decodes"));
                }
            }
            assert_eq!(frames.len(), 1, "{}: cut at {cut}", vector.name);
            assert_eq!(frames[0], whole, "{}: cut at {cut}", vector.name);
            assert_eq!(buffer.pending(), 0, "{}: cut at {cut}", vector.name);
        }
    }
}

//! Property: every record and filter the types can express encodes to bytes that decode to
//! the same value and re-encode to the same bytes; and the two record readers agree, as does
//! what `Record::encode_meta` says of the record it writes.

use herald_proto::msgpack::Reader;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{Filter, Glob, Kind, KindSet, Origin, PrioritySet, Record, RecordMeta, Value};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9 ._-]{0,40}", "\\PC{0,10}", "x{300}"]
}

fn subject() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9._-]{0,30}"
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("NaN never equals itself", |f| !f.is_nan())
            .prop_map(Value::Float),
        text().prop_map(Value::Str),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes),
        any::<i64>().prop_map(Value::Time),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,8}", inner, 0..4)
                .prop_map(|map| Value::Map(map.into_iter().collect())),
        ]
    })
}

fn origin() -> impl Strategy<Value = Origin> {
    (
        text(),
        text(),
        text(),
        proptest::option::of(any::<u64>()),
        proptest::option::of(0u64..100),
    )
        .prop_map(|(host, process, file, line, stack_level)| Origin {
            host,
            process,
            file,
            line,
            stack_level,
            ..Origin::default()
        })
}

fn record() -> impl Strategy<Value = Record> {
    (
        (
            0u8..3,
            subject(),
            text(),
            any::<i64>(),
            0usize..ALL_PRIORITIES.len(),
        ),
        (
            proptest::collection::vec("[a-z]{1,10}", 0..3),
            origin(),
            text(),
        ),
        (
            proptest::collection::btree_map("[a-z]{1,8}", value(), 0..5),
            proptest::option::of(subject()),
            proptest::option::of(any::<u64>()),
        ),
    )
        .prop_map(
            |(
                (kind, subject, type_name, time, priority),
                (audience, origin, text),
                (fields, reply_to, id),
            )| {
                Record {
                    kind: Kind::from_u8(kind).expect("0..3"),
                    subject,
                    type_name,
                    time,
                    priority: ALL_PRIORITIES[priority],
                    audience,
                    origin,
                    text,
                    fields: fields.into_iter().collect(),
                    reply_to,
                    id,
                }
            },
        )
}

/// Subjects good and bad: wildcards, control characters, empty, too long.
fn any_subject() -> impl Strategy<Value = String> {
    prop_oneof![
        subject(),
        "[A-Za-z.*?\\x00-\\x1f ]{0,6}",
        "\\PC{0,6}",
        "x{1020,1030}"
    ]
}

/// Values nested `depth` deep (an array or map at every level).
fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |inner, level| match level % 2 {
        0 => Value::Array(vec![inner]),
        _ => Value::Map(vec![("n".into(), inner)]),
    })
}

/// Fields as a `Record` may hold them, names given twice and values nested too deep among
/// them.
fn any_fields() -> impl Strategy<Value = Vec<(String, Value)>> {
    let deep = (28usize..36).prop_map(|depth| ("deep".to_string(), nested(depth, Value::Int(1))));
    prop_oneof![
        proptest::collection::vec(("[a-c]{1,2}", value()), 0..6),
        proptest::collection::vec(("[a-z]{1,2}", value()), 15..19),
        (
            proptest::collection::vec(("[a-z]{1,3}", value()), 0..3),
            deep
        )
            .prop_map(|(mut fields, deep)| {
                fields.push(deep);
                fields
            }),
        (
            "[a-c]{1,2}",
            proptest::collection::vec(("[a-b]", value()), 0..4)
        )
            .prop_map(|(name, inner)| vec![(name, Value::Map(inner))]),
    ]
}

proptest! {
    #[test]
    fn encode_meta_says_what_the_scan_reads(
        record in record(),
        subject in any_subject(),
        reply_to in proptest::option::of(any_subject()),
        fields in any_fields(),
        log_id in "[a-z]{0,3}",
        prefix in 0usize..40,
    ) {
        let record = Record {
            subject,
            reply_to,
            fields,
            origin: Origin { log_id, ..record.origin.clone() },
            ..record
        };
        // Written after other bytes, as into a batch's buffer.
        let mut out = vec![0xc1; prefix];
        let said = record.encode_meta(&mut out);
        let bytes = record.to_bytes();
        prop_assert_eq!(&out[prefix..], &bytes[..]);
        let scanned = RecordMeta::scan(&mut Reader::new(&bytes), 0);
        prop_assert_eq!(said, scanned);
    }

    #[test]
    fn records_round_trip_byte_for_byte(record in record()) {
        let bytes = record.to_bytes();
        let decoded = Record::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&decoded, &record);
        prop_assert_eq!(decoded.to_bytes(), bytes.clone());
        let meta = RecordMeta::scan(&mut Reader::new(&bytes), 0).unwrap();
        prop_assert_eq!(meta.priority, record.priority);
        prop_assert_eq!(meta.kind, record.kind);
        prop_assert_eq!(meta.time, record.time);
        let (start, end) = meta.subject;
        prop_assert_eq!(&bytes[start as usize..end as usize], record.subject.as_bytes());
    }

    #[test]
    fn scan_and_decode_agree_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let decoded = Record::decode(&mut Reader::new(&bytes));
        let scanned = RecordMeta::scan(&mut Reader::new(&bytes), 0);
        prop_assert_eq!(decoded.is_ok(), scanned.is_ok(), "{:?} vs {:?}", decoded, scanned);
        if let (Err(a), Err(b)) = (decoded, scanned) {
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn filters_round_trip(
        subject in "[A-Za-z.*?]{1,12}",
        type_name in "[A-Za-z*]{1,8}",
        priorities in 1u16..0x0f7f,
        audience in proptest::collection::vec("[a-z]{1,10}", 0..3),
        kinds in 1u8..8,
    ) {
        let priorities = PrioritySet::from_bits(priorities);
        prop_assume!(!priorities.is_empty());
        let filter = Filter {
            subject: Glob::new(&subject).unwrap(),
            type_name: Glob::new(&type_name).unwrap(),
            priorities,
            audience,
            kinds: KindSet::from_bits(kinds),
        };
        let mut bytes = Vec::new();
        filter.encode(&mut bytes);
        prop_assert_eq!(Filter::decode(&mut Reader::new(&bytes)).unwrap(), filter);
    }
}

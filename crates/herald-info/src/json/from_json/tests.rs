use serde_json::json;

use super::*;
use crate::type_def::{AttributeDef, TypeDef};

fn registry() -> TypeRegistry {
    let mut registry = TypeRegistry::new();
    let mut beam = TypeDef::new("Beam");
    beam.attributes = vec![
        AttributeDef::new("energy", AttrType::Double, ""),
        AttributeDef::new("at", AttrType::Time, ""),
    ];
    registry.declare(beam).unwrap();
    let mut run = TypeDef::new("RunInfo");
    run.attributes = vec![
        AttributeDef::new("run", AttrType::U32, ""),
        AttributeDef::new("start", AttrType::Time, ""),
        AttributeDef::new("raw", AttrType::Bytes, ""),
        AttributeDef::new("gains", "array<float>".parse().unwrap(), ""),
        AttributeDef::new("beam", AttrType::Nested("Beam".into()), ""),
        AttributeDef::new("label", AttrType::String, ""),
    ];
    registry.declare(run).unwrap();
    registry
}

fn convert(type_name: Option<&str>, json: Json) -> Result<Vec<Field>, String> {
    let Json::Object(map) = json else {
        panic!("an object")
    };
    attributes_from_json(&registry(), type_name, &map).map_err(|err| err.to_string())
}

// A JSON object's keys come sorted by name; the store then puts attributes in the type's
// order.

#[test]
fn the_type_guides_times_bytes_numbers_and_nesting() {
    let fields = convert(
        Some("RunInfo"),
        json!({
            "run": 42.0,
            "start": "2025-11-20T11:00:00.5+09:00",
            "raw": "00FF",
            "gains": [1, 2.5],
            "beam": {"energy": 7, "at": 1_000},
            "label": "x",
        }),
    )
    .unwrap();
    let beam = vec![
        ("at".into(), Value::Time(1_000)),
        ("energy".into(), Value::Float(7.0)),
    ];
    assert_eq!(
        fields,
        vec![
            ("beam".into(), Value::Map(beam)),
            (
                "gains".into(),
                Value::Array(vec![Value::Float(1.0), Value::Float(2.5)])
            ),
            ("label".into(), Value::Str("x".into())),
            ("raw".into(), Value::Bytes(vec![0, 255])),
            ("run".into(), Value::Int(42)),
            ("start".into(), Value::Time(1_763_604_000_500_000_000)),
        ]
    );
}

#[test]
fn without_a_type_values_keep_their_json_kind() {
    let big = 18_446_744_073_709_551_615_u64;
    let fields = convert(
        None,
        json!({"t": "2025-11-20T02:00:00Z", "n": 5, "x": 1.5, "big": big,
               "list": [true], "map": {"a": "b"}}),
    )
    .unwrap();
    assert_eq!(
        fields,
        vec![
            ("big".into(), Value::UInt(big)),
            ("list".into(), Value::Array(vec![Value::Bool(true)])),
            (
                "map".into(),
                Value::Map(vec![("a".into(), Value::from("b"))])
            ),
            ("n".into(), Value::Int(5)),
            ("t".into(), Value::Str("2025-11-20T02:00:00Z".into())),
            ("x".into(), Value::Float(1.5)),
        ]
    );
    // What does not fit is left for the store's check to name.
    assert_eq!(
        convert(Some("RunInfo"), json!({"run": 1.5, "label": 5})).unwrap(),
        vec![
            ("label".into(), Value::Int(5)),
            ("run".into(), Value::Float(1.5)),
        ]
    );
}

#[test]
fn errors_name_the_attribute_path_and_value() {
    for (json, message) in [
        (
            json!({"beam": {"energy": 1, "at": "noon"}}),
            "attribute `beam.at` of type `RunInfo` expects time, found string `noon` (too short or not ASCII)",
        ),
        (
            json!({"start": "2025-11-20T02:00:00"}),
            "attribute `start` of type `RunInfo` expects time, found string `2025-11-20T02:00:00` (no zone (add `Z` for UTC or an offset like `+09:00`))",
        ),
        (
            json!({"raw": "+f"}),
            "attribute `raw` of type `RunInfo` expects bytes, found string `+f` (not hex)",
        ),
        (
            json!({"gains": [1, null]}),
            "attribute `gains[1]` of type `RunInfo` expects float, found null",
        ),
        (
            json!({"other": null}),
            "attribute `other` of type `RunInfo` expects a value, found null",
        ),
        (
            json!({"run": 18_446_744_073_709_551_615_u64}),
            "attribute `run` of type `RunInfo`: value `18446744073709551615` is out of range for u32 (0..=4294967295)",
        ),
    ] {
        assert_eq!(convert(Some("RunInfo"), json).unwrap_err(), message);
    }
}

#[test]
fn producer_times() {
    assert_eq!(time_from_json(&json!(5)), Ok(5));
    assert_eq!(
        time_from_json(&json!("1970-01-01T00:00:01Z")),
        Ok(1_000_000_000)
    );
    assert_eq!(
        time_from_json(&json!(true)).unwrap_err().to_string(),
        "bad time `true`: neither ISO 8601 text nor integer nanoseconds (expected ISO 8601 with a zone, e.g. `2026-11-20T02:00:00.123Z`)"
    );
}

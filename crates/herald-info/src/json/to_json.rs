//! Objects, types and values to JSON.

use herald_proto::info::{ObjectData, TypeData};
use herald_proto::time::{format_iso8601, format_iso8601_exact};
use herald_proto::value::{Field, Value};
use serde_json::{json, Map, Value as Json};

/// Returns a value as JSON: bytes as hex text, times as exact ISO 8601 text.
pub fn value_json(value: &Value) -> Json {
    match value {
        Value::Bool(v) => Json::Bool(*v),
        Value::Int(v) => json!(v),
        Value::UInt(v) => json!(v),
        // Not finite (NaN, ±inf) has no JSON form: it becomes `null`.
        Value::Float(v) => json!(v),
        Value::Str(v) => Json::String(v.clone()),
        Value::Bytes(v) => Json::String(v.iter().map(|b| format!("{b:02x}")).collect()),
        Value::Time(v) => Json::String(format_iso8601_exact(*v)),
        Value::Array(items) => Json::Array(items.iter().map(value_json).collect()),
        Value::Map(fields) => Json::Object(fields_json(fields)),
    }
}

/// Returns named values as a JSON object.
pub fn fields_json(fields: &[Field]) -> Map<String, Json> {
    fields
        .iter()
        .map(|(name, value)| (name.clone(), value_json(value)))
        .collect()
}

/// Returns an object as `{name, type, time, time_ns, version, attributes}`.
pub fn object_json(object: &ObjectData) -> Json {
    json!({
        "name": object.name,
        "type": object.type_name,
        "time": format_iso8601(object.time),
        "time_ns": object.time,
        "version": object.version,
        "attributes": fields_json(&object.attributes),
    })
}

/// Returns a type as `{name, base, description, attributes: [{name, type, description}]}`.
pub fn type_json(data: &TypeData) -> Json {
    let attributes: Vec<Json> = data
        .attributes
        .iter()
        .map(|attribute| {
            json!({
                "name": attribute.name,
                "type": attribute.attr_type,
                "description": attribute.description,
            })
        })
        .collect();
    json!({
        "name": data.name,
        "base": data.base,
        "description": data.description,
        "attributes": attributes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_and_values() {
        let object = ObjectData {
            name: "RunParams.RunInfo".into(),
            type_name: "RunInfo".into(),
            time: 1_763_604_000_123_456_789,
            version: 2,
            attributes: vec![
                ("run".into(), Value::Int(42)),
                ("start".into(), Value::Time(1_763_604_000_123_456_000)),
                ("raw".into(), Value::Bytes(vec![0, 255])),
                (
                    "beam".into(),
                    Value::Map(vec![("energy".into(), Value::Float(6.8))]),
                ),
                ("gains".into(), Value::Array(vec![Value::Float(f64::NAN)])),
            ],
        };
        assert_eq!(
            object_json(&object).to_string(),
            concat!(
                r#"{"attributes":{"beam":{"energy":6.8},"gains":[null],"raw":"00ff","run":42,"#,
                r#""start":"2025-11-20T02:00:00.123456Z"},"name":"RunParams.RunInfo","#,
                r#""time":"2025-11-20T02:00:00.123Z","time_ns":1763604000123456789,"#,
                r#""type":"RunInfo","version":2}"#
            )
        );
    }
}

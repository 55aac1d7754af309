//! The information-object target: the IS-style XML and the JSON form of objects.

use std::sync::OnceLock;

use herald_info::json::{attributes_from_json, object_json, time_from_json};
use herald_info::xml::object_xml;
use herald_info::{AttrType, AttributeDef, TypeDef, TypeRegistry};
use herald_proto::info::{ObjectData, TypeData};
use herald_proto::msgpack::Reader;
use herald_proto::time::{format_iso8601, format_iso8601_exact, parse_iso8601};
use herald_proto::value::{Field, Value};
use serde_json::Value as Json;

use super::xml_check::{is_xml_char, parse_document, Element};
use super::{assert_same, selector};

/// Most types read from one input in mode 2.
const MAX_TYPES: u32 = 16;

/// Input: `mode: u8 | rest`. Mode `% 3`: 0, an object as the `INFO_REPLY` frame carries it
/// (MessagePack), checked against a fixed registry of types; 1, JSON as the HTTP API takes
/// it (`{"name", "type", "time", "attributes": {…}}`, or the attributes alone), read
/// through the same registry; 2, an array of types then an object, the object checked
/// against those types.
///
/// Each object is written as XML, which must be well formed and read back (by the small
/// parser in `xml_check.rs`) to the object's own names and values; and as JSON, which must
/// read back to the same attributes whenever the object fits its type.
pub fn is_xml(data: &[u8]) {
    let Some((mode, rest)) = selector(data) else {
        return;
    };
    match mode % 3 {
        0 => {
            if let Ok(object) = ObjectData::decode(&mut Reader::new(rest)) {
                check_object(&object, registry());
            }
        }
        1 => check_json(rest),
        _ => {
            let mut reader = Reader::new(rest);
            let Ok(count) = reader.read_array_len() else {
                return;
            };
            let mut types = Vec::new();
            for _ in 0..count.min(MAX_TYPES) {
                match TypeData::decode(&mut reader) {
                    Ok(data) => types.push(data),
                    Err(_) => return,
                }
            }
            let registry = TypeRegistry::from_data(types).unwrap_or_default();
            if let Ok(object) = ObjectData::decode(&mut reader) {
                check_object(&object, &registry);
            }
        }
    }
}

/// The types mode 0 and 1 read objects with: inheritance, nesting, arrays, times, bytes,
/// and descriptions that need escaping.
fn registry() -> &'static TypeRegistry {
    static REGISTRY: OnceLock<TypeRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let attribute = |name: &str, attr_type: &str, description: &str| {
            let attr_type: AttrType = attr_type.parse().expect("a valid attribute type");
            AttributeDef::new(name, attr_type, description)
        };
        let mut base = TypeDef::new("Base");
        base.attributes = vec![attribute("ok", "bool", "all <good> & \"well\"")];
        let mut beam = TypeDef::new("Beam");
        beam.attributes = vec![
            attribute("energy", "double", "GeV"),
            attribute("particle", "string", "'p' or 'e'"),
        ];
        let mut run = TypeDef::new("RunInfo");
        run.base = Some("Base".into());
        run.attributes = vec![
            attribute("run", "u32", "run number"),
            attribute("small", "s8", ""),
            attribute("big", "u64", ""),
            attribute("gain", "float", ""),
            attribute("gains", "array<float>", "per channel"),
            attribute("start", "time", "when it began"),
            attribute("raw", "bytes", ""),
            attribute("note", "string", ""),
            attribute("beam", "Beam", ""),
            attribute("beams", "array<Beam>", ""),
        ];
        let mut registry = TypeRegistry::new();
        for def in [base, beam, run] {
            registry.declare(def).expect("the fixed types declare");
        }
        registry
    })
}

fn check_json(text: &[u8]) {
    let Ok(json) = serde_json::from_slice::<Json>(text) else {
        return;
    };
    let Some(object) = json.as_object() else {
        check_time_json(&json);
        return;
    };
    let type_name = object.get("type").and_then(Json::as_str);
    let attributes = object
        .get("attributes")
        .and_then(Json::as_object)
        .unwrap_or(object);
    let time = object.get("time").map_or(Ok(0), |time| {
        check_time_json(time);
        time_from_json(time)
    });
    let Ok(fields) = attributes_from_json(registry(), type_name, attributes) else {
        return;
    };
    let object = ObjectData {
        name: object
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("Fuzz.Object")
            .to_string(),
        type_name: type_name.unwrap_or_default().to_string(),
        time: time.unwrap_or_default(),
        version: 1,
        attributes: fields,
    };
    check_object(&object, registry());
}

/// A time read from ISO 8601 text is written back exactly.
fn check_time_json(json: &Json) {
    if let (Ok(nanos), Json::String(_)) = (time_from_json(json), json) {
        assert_eq!(parse_iso8601(&format_iso8601_exact(nanos)), Ok(nanos));
    }
}

fn check_object(object: &ObjectData, registry: &TypeRegistry) {
    let xml = object_xml(object, registry);
    let root = parse_document(&xml).unwrap_or_else(|err| panic!("{err} in\n{xml}"));
    check_xml(&root, object, registry);
    check_json_round_trip(object, registry);
}

/// What an XML reader must get for `text`: the text itself, with each character XML 1.0
/// cannot carry (most control characters) replaced by U+FFFD.
fn readable(text: &str) -> String {
    text.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

fn check_xml(root: &Element, object: &ObjectData, registry: &TypeRegistry) {
    assert_eq!(root.name, "obj");
    assert_eq!(
        root.attribute("name"),
        Some(readable(&object.name).as_str())
    );
    assert_eq!(
        root.attribute("type"),
        Some(readable(&object.type_name).as_str())
    );
    assert_eq!(
        root.attribute("time"),
        Some(format_iso8601(object.time).as_str())
    );
    assert!(root.text().trim().is_empty(), "text between attributes");
    let declared = registry.attributes(&object.type_name);
    let elements: Vec<&Element> = root.elements().collect();
    assert_eq!(
        elements.len(),
        object.attributes.len(),
        "one <attr> per attribute"
    );
    for (element, (name, value)) in elements.into_iter().zip(&object.attributes) {
        let attribute = declared.iter().find(|attribute| attribute.name == *name);
        let (attr_type, description) = attribute.map_or((String::new(), ""), |attribute| {
            (
                attribute.attr_type.to_string(),
                attribute.description.as_str(),
            )
        });
        assert_eq!(element.name, "attr");
        assert_eq!(element.attribute("name"), Some(readable(name).as_str()));
        assert_eq!(
            element.attribute("descr"),
            Some(readable(description).as_str())
        );
        assert_eq!(
            element.attribute("type"),
            Some(readable(&attr_type).as_str())
        );
        let expected: Vec<String> = match value {
            Value::Array(items) => items.iter().map(|item| readable(&item.to_text())).collect(),
            other => vec![readable(&other.to_text())],
        };
        let found: Vec<String> = element
            .elements()
            .inspect(|v| assert_eq!(v.name, "v"))
            .map(Element::text)
            .collect();
        assert_eq!(found, expected, "values of `{name}`");
    }
}

/// The JSON form reads back to the same attributes: through the type when the object fits
/// it, as plain JSON kinds when the type is not declared and the values have JSON kinds.
fn check_json_round_trip(object: &ObjectData, registry: &TypeRegistry) {
    let json = object_json(object);
    assert_eq!(json["time_ns"], object.time);
    assert_eq!(json["version"], object.version);
    let Some(map) = json["attributes"].as_object() else {
        panic!("attributes are an object: {json}");
    };
    let type_name = object.type_name.as_str();
    if !object.attributes.iter().all(|(_, value)| finite(value)) {
        return;
    }
    if registry.get(type_name).is_some() {
        if registry
            .check(type_name, &object.attributes, false)
            .is_err()
        {
            return;
        }
        let mut expected = object.attributes.clone();
        registry.normalize(type_name, &mut expected);
        let mut back = attributes_from_json(registry, Some(type_name), map)
            .unwrap_or_else(|err| panic!("{json} does not read back: {err}"));
        registry.normalize(type_name, &mut back);
        return assert_same(&back, &expected, "attributes through JSON");
    }
    let Some(expected) = sorted_json_kinds(&object.attributes) else {
        return;
    };
    let back = attributes_from_json(registry, None, map)
        .unwrap_or_else(|err| panic!("{json} does not read back: {err}"));
    assert_same(
        &sorted_json_kinds(&back),
        &Some(expected),
        "untyped attributes through JSON",
    );
}

/// Returns false if a float anywhere in `value` is NaN or infinite (JSON writes `null`).
fn finite(value: &Value) -> bool {
    match value {
        Value::Float(float) => float.is_finite(),
        Value::Array(items) => items.iter().all(finite),
        Value::Map(fields) => fields.iter().all(|(_, value)| finite(value)),
        _ => true,
    }
}

/// Returns the fields sorted by name at every level, as a JSON object holds them, or `None`
/// when a name repeats or a value has no JSON kind of its own (bytes and times are text).
fn sorted_json_kinds(fields: &[Field]) -> Option<Vec<Field>> {
    let mut sorted = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        sorted.push((name.clone(), json_kind(value)?));
    }
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let unique = sorted.windows(2).all(|pair| pair[0].0 != pair[1].0);
    unique.then_some(sorted)
}

fn json_kind(value: &Value) -> Option<Value> {
    Some(match value {
        Value::Bytes(_) | Value::Time(_) => return None,
        Value::Array(items) => Value::Array(items.iter().map(json_kind).collect::<Option<_>>()?),
        Value::Map(fields) => Value::Map(sorted_json_kinds(fields)?),
        other => other.clone(),
    })
}

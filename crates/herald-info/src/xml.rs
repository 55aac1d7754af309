//! The Information Service's XML form of an object, as ATLAS IS tools show it:
//!
//! ```text
//! <obj name="RunParams.RunInfo" type="RunInfo" time="2025-11-20T02:00:00.000Z">
//!   <attr name="run" descr="run number" type="u32"><v>42</v></attr>
//!   <attr name="gains" descr="per channel" type="array&lt;float&gt;"><v>1</v><v>2.5</v></attr>
//! </obj>
//! ```
//!
//! Each attribute's `descr` and `type` come from the object's type or its bases (empty when
//! the type is not declared); an array gives one `<v>` per element, any other value one.

use herald_proto::info::ObjectData;
use herald_proto::time::format_iso8601;
use herald_proto::value::Value;

use crate::registry::TypeRegistry;

/// Returns `object` as Information-Service XML, one line per attribute, ending in a newline.
pub fn object_xml(object: &ObjectData, registry: &TypeRegistry) -> String {
    let declared = registry.attributes(&object.type_name);
    let mut xml = format!(
        "<obj name=\"{}\" type=\"{}\" time=\"{}\">\n",
        escape(&object.name),
        escape(&object.type_name),
        format_iso8601(object.time)
    );
    for (name, value) in &object.attributes {
        let (attr_type, description) = declared
            .iter()
            .find(|attribute| attribute.name == *name)
            .map(|attribute| {
                (
                    attribute.attr_type.to_string(),
                    attribute.description.as_str(),
                )
            })
            .unwrap_or_default();
        let values: String = match value {
            Value::Array(items) => items.iter().map(element).collect(),
            other => element(other),
        };
        xml.push_str(&format!(
            "  <attr name=\"{}\" descr=\"{}\" type=\"{}\">{values}</attr>\n",
            escape(name),
            escape(description),
            escape(&attr_type)
        ));
    }
    xml.push_str("</obj>\n");
    xml
}

fn element(value: &Value) -> String {
    format!("<v>{}</v>", escape(&value.to_text()))
}

/// Escapes text for XML content and double-quoted attributes. Tabs and line ends become
/// character references, so that a reader gets them back: read literally, attribute-value
/// normalization would turn them into spaces and line-end handling a `\r` into `\n`.
/// Characters XML 1.0 cannot carry at all (the other control characters, U+FFFE, U+FFFF)
/// become U+FFFD, the replacement character, so that the document stays well formed.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\t' => escaped.push_str("&#9;"),
            '\n' => escaped.push_str("&#10;"),
            '\r' => escaped.push_str("&#13;"),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr_type::AttrType;
    use crate::type_def::{AttributeDef, TypeDef};

    #[test]
    fn names_types_and_descriptions_from_the_type_chain() {
        let mut registry = TypeRegistry::new();
        let mut base = TypeDef::new("Base");
        base.attributes = vec![AttributeDef::new("ok", AttrType::Bool, "all good")];
        registry.declare(base).unwrap();
        let mut run = TypeDef::new("RunInfo");
        run.base = Some("Base".into());
        run.attributes = vec![
            AttributeDef::new("run", AttrType::U32, "run <number>"),
            AttributeDef::new("gains", "array<float>".parse().unwrap(), "per \"channel\""),
        ];
        registry.declare(run).unwrap();
        let object = ObjectData {
            name: "RunParams.RunInfo".into(),
            type_name: "RunInfo".into(),
            time: 0,
            version: 1,
            attributes: vec![
                ("ok".into(), Value::Bool(true)),
                ("run".into(), Value::Int(42)),
                (
                    "gains".into(),
                    Value::Array(vec![Value::Float(1.0), Value::Float(2.5)]),
                ),
                ("extra".into(), Value::from("a&b")),
            ],
        };
        assert_eq!(
            object_xml(&object, &registry),
            "<obj name=\"RunParams.RunInfo\" type=\"RunInfo\" time=\"1970-01-01T00:00:00.000Z\">\n  \
             <attr name=\"ok\" descr=\"all good\" type=\"bool\"><v>true</v></attr>\n  \
             <attr name=\"run\" descr=\"run &lt;number&gt;\" type=\"u32\"><v>42</v></attr>\n  \
             <attr name=\"gains\" descr=\"per &quot;channel&quot;\" type=\"array&lt;float&gt;\"><v>1</v><v>2.5</v></attr>\n  \
             <attr name=\"extra\" descr=\"\" type=\"\"><v>a&amp;b</v></attr>\n</obj>\n"
        );
    }

    /// Found by fuzzing (is_xml): a control character made the document ill-formed, and a
    /// line end in an attribute came back to a reader as a space.
    #[test]
    fn every_string_stays_well_formed_and_readable() {
        let object = ObjectData {
            name: "A.b\u{5}".into(),
            type_name: "T\r".into(),
            time: 0,
            version: 1,
            attributes: vec![("x\ty".into(), Value::from("line\nnext\u{ffff}"))],
        };
        assert_eq!(
            object_xml(&object, &TypeRegistry::new()),
            "<obj name=\"A.b\u{fffd}\" type=\"T&#13;\" time=\"1970-01-01T00:00:00.000Z\">\n  \
             <attr name=\"x&#9;y\" descr=\"\" type=\"\">\
             <v>line&#10;next\u{fffd}</v></attr>\n</obj>\n"
        );
    }
}

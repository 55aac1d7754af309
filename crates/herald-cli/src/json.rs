//! JSON forms of records and gap notices for `--json` output; values (and information
//! objects) take the one JSON form of `herald_info::json`.

use herald_client::Delivered;
use herald_info::json::fields_json;
use herald_proto::frame::GapNotice;
use herald_proto::time::format_iso8601;
use herald_proto::Origin;
use serde_json::{json, Map, Value as Json};

fn origin(origin: &Origin) -> Json {
    let mut map = Map::new();
    let texts = origin.named_texts();
    for (name, text) in texts {
        if !text.is_empty() {
            map.insert(name.to_string(), Json::String(text.to_string()));
        }
    }
    if let Some(line) = origin.line {
        map.insert("line".to_string(), json!(line));
    }
    if let Some(level) = origin.stack_level {
        map.insert("stack_level".to_string(), json!(level));
    }
    Json::Object(map)
}

/// Converts a delivered record.
pub fn delivered(delivered: &Delivered) -> Json {
    let record = delivered.record();
    let mut map = Map::new();
    map.insert("seq".into(), json!(delivered.seq));
    map.insert(
        "received".into(),
        Json::String(format_iso8601(delivered.received)),
    );
    map.insert("kind".into(), Json::String(record.kind.name().into()));
    map.insert("time".into(), Json::String(format_iso8601(record.time)));
    map.insert("time_ns".into(), json!(record.time));
    map.insert(
        "priority".into(),
        Json::String(record.priority.name().into()),
    );
    map.insert("subject".into(), Json::String(record.subject.clone()));
    map.insert("type".into(), Json::String(record.type_name.clone()));
    map.insert("audience".into(), json!(record.audience));
    map.insert("origin".into(), origin(&record.origin));
    map.insert("text".into(), Json::String(record.text.clone()));
    map.insert("fields".into(), Json::Object(fields_json(&record.fields)));
    if let Some(reply_to) = &record.reply_to {
        map.insert("reply_to".into(), Json::String(reply_to.clone()));
    }
    if let Some(id) = record.id {
        map.insert("id".into(), json!(id));
    }
    Json::Object(map)
}

/// Converts a gap notice.
pub fn gap(gap: &GapNotice) -> Json {
    let by_priority: Map<String, Json> = gap
        .by_priority
        .iter()
        .map(|(p, n)| (p.name().to_string(), json!(n)))
        .collect();
    json!({
        "gap": { "count": gap.count, "first_seq": gap.first_seq, "last_seq": gap.last_seq, "by_priority": by_priority }
    })
}

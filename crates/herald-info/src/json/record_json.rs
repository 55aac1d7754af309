//! The JSON form of a record, with what the server added: `{"seq", "received", "kind",
//! "time" (ISO 8601), "time_ns", "priority", "subject", "type", "audience", "origin",
//! "text", "fields", "reply_to"?, "id"?}` — for `herald tail --json`, `herald query` and
//! the HTTP archive API; and of an archive bucket, `{"start", "start_ns", "end_ns",
//! "count", "fields": {name: {"count", "min", "max", "mean", "first", "last"}}}`.

use herald_proto::archive::Bucket;
use herald_proto::time::format_iso8601;
use herald_proto::{Origin, Record};
use serde_json::{json, Map, Value as Json};

use super::fields_json;

fn origin_json(origin: &Origin) -> Json {
    let mut map = Map::new();
    for (name, text) in origin.named_texts() {
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

/// Converts `record`, numbered `seq` and received at `received` by the server.
pub fn record_json(record: &Record, seq: u64, received: i64) -> Json {
    let mut map = Map::new();
    map.insert("seq".into(), json!(seq));
    map.insert("received".into(), Json::String(format_iso8601(received)));
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
    map.insert("origin".into(), origin_json(&record.origin));
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

/// Converts one bucket of a decimated archive query.
pub fn bucket_json(bucket: &Bucket) -> Json {
    let mut fields = Map::new();
    for stats in &bucket.fields {
        fields.insert(
            stats.name.clone(),
            json!({
                "count": stats.count, "min": stats.min, "max": stats.max,
                "mean": stats.mean, "first": stats.first, "last": stats.last,
            }),
        );
    }
    json!({
        "start": format_iso8601(bucket.start),
        "start_ns": bucket.start,
        "end_ns": bucket.end,
        "count": bucket.count,
        "fields": fields,
    })
}
